#include "cluster_args.hpp"

#include <iostream>
#include <stdexcept>

#include "commands.hpp"
#include "replay_progress.hpp"

#include "treering/topologies/load.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
namespace {

void add_overrides(CLI::App& command, ClusterArgs& args) {
  command.add_option("--nodes", args.nodes, "Number of nodes (clusters with one node group)");
  command.add_option("--gpus-per-node", args.gpus_per_node, "GPUs per node, up to the node's max_gpus_per_node");
  add_set_option(command, args.settings);
}

}  // namespace

void add_set_option(CLI::App& command, std::vector<std::string>& settings) {
  command
      .add_option("--set", settings,
                  "What-if: PATH=VALUE on the cluster file, e.g. nics.bandwidth=800Gb/s (repeatable)")
      ->allow_extra_args(false);
}

topologies::ClusterOverrides overrides_of(const ClusterArgs& args) {
  topologies::ClusterOverrides overrides{args.nodes, args.gpus_per_node, {}};
  for (const std::string& text : args.settings) overrides.settings.push_back(topologies::parse_setting(text));
  return overrides;
}

void add_cluster_positional(CLI::App& command, ClusterArgs& args) {
  command.add_option("cluster", args.cluster, "A preset name (treering topo list) or a YAML file")->required();
  add_overrides(command, args);
}

void add_cluster_option(CLI::App& command, ClusterArgs& args, bool required) {
  command.add_option("--cluster", args.cluster, "A preset name (treering topo list) or a YAML file")
      ->required(required);
  add_overrides(command, args);
}

topologies::Topology load_topology(const ClusterArgs& args) {
  topologies::Topology topology = topologies::build_topology(args.cluster, overrides_of(args));
  for (const std::string& warning : topologies::cluster_warnings(topology.spec()))
    std::cerr << "warning: " << warning << '\n';
  return topology;
}

void add_decode_options(CLI::App& command, DecodeArgs& args, const std::string& algorithms_help,
                        const std::vector<OutputFormat>& formats) {
  add_cluster_option(command, args.cluster);
  command.add_option("--workload", args.workload, "A workload preset (treering workload list) or a YAML file")
      ->capture_default_str();
  command
      .add_option("--seq-len", args.seq_len,
                  std::string("Context lengths: 80k, 5.12M, lists 80k,1M and ranges 80k:5.12M:x2; ") +
                      topologies::kTokenCountRule)
      ->required();
  command.add_option("--algo", args.algorithms, algorithms_help)->delimiter(',')->capture_default_str();
  command.add_option("--gpus", args.gpus, "The GPUs to use, in ring order (default: all, node by node)")
      ->delimiter(',');
  command
      .add_option("--batch", args.batches,
                  "Sequences decoded together (default: the workload's); predict and simulate take a list: 1,4")
      ->delimiter(',');
  command.add_option("--tokens", args.tokens, "Also estimate generating this many tokens (JSON generation_s)")
      ->check(CLI::Range(1LL, 1000000000000LL));
  command
      .add_option("--split", args.split,
                  "KV cache per GPU: equal, or by-speed (in proportion to each GPU's speed, for mixed GPUs)")
      ->check(CLI::IsMember({"equal", "by-speed"}))
      ->capture_default_str();
  command.add_flag("--prefill", args.prefill,
                   "Add the prompt's prefill: the --impl profile's schedule where it has one, else a balanced estimate "
                   "(JSON prefill_s; in generation_s)");
  add_impl_option(command, args.impl);
  add_format_option(command, args.format, formats);
}

void add_progress_flag(CLI::App& command) {
  command.add_flag_callback("--progress", ask_for_progress,
                            "Show progress on stderr even when it is not a terminal (default: on a terminal only)");
}

void drop_options(CLI::App& command, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    CLI::Option* option = command.get_option_no_throw(name);
    if (option == nullptr || !command.remove_option(option)) throw std::logic_error("drop_options: no option " + name);
  }
}

void add_impl_option(CLI::App& command, std::string& impl) {
  std::string presets;
  for (const topologies::ImplProfile& profile : topologies::impl_presets()) presets += profile.name + ", ";
  command
      .add_option(
          "--impl", impl,
          "The implementation predicted: " + presets + "or a profile YAML file (treering impl list, impl show NAME)")
      ->capture_default_str();
}

model::PlanOptions plan_options(const DecodeArgs& args) {
  model::PlanOptions options;
  options.split = model::parse_token_split(args.split);
  options.impl = load_impl(args.impl);
  return options;
}

DecodeRequest decode_request(const DecodeArgs& args, const LayoutChoice& layout) {
  DecodeRequest request;
  request.workloads = load_workloads(args);
  for (const std::string& name : args.algorithms) request.algorithms.push_back(model::parse_decode_algorithm(name));
  request.options = plan_options(args);
  request.seq_lens = topologies::parse_token_counts(args.seq_len);
  request.gpus = args.gpus;
  request.layout = layout;
  request.generation = {args.tokens, args.prefill};
  return request;
}

std::vector<model::Workload> load_workloads(const DecodeArgs& args) {
  const model::Workload workload = load_workload(args.workload);
  if (args.batches.empty()) return {workload};
  std::vector<model::Workload> batched;
  for (int batch : args.batches) {
    if (batch < 1) throw topologies::InputError("--batch must be at least 1");
    batched.push_back(workload);
    batched.back().batch = batch;
  }
  return batched;
}

model::Workload load_workload(const DecodeArgs& args) {
  if (args.batches.size() > 1) throw topologies::InputError("--batch takes one value for this command");
  return load_workloads(args).front();
}

}  // namespace treering::cli
