// treering simulate | compare: the simulator's replay of the plans, alone or beside the model.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
namespace fmt = treering::topologies;

struct SimulateArgs : DecodeArgs {
  SimulateArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  std::string trace;
  bool full_ring = false;
};

struct Case {
  model::DecodeResult predicted;
  sim::ReplayResult simulated;
  model::DecodePlan plan;
};

std::vector<Case> run_cases(const SimulateArgs& args, const topologies::Topology& topology) {
  const model::Workload workload = load_workload(args);
  const model::DecodeModel decode(topology, args.gpus);
  std::vector<Case> cases;
  const std::vector<long long> lengths = fmt::parse_token_counts(args.seq_len);
  for (long long seq_len : lengths) {
    for (const std::string& name : args.algorithms) {
      const model::DecodePlan plan = decode.plan(model::parse_decode_algorithm(name), workload, seq_len);
      model::DecodeResult predicted = decode.evaluate(plan);
      model::check_fits(predicted, decode);
      if (args.format == "table" && lengths.size() * args.algorithms.size() > 1) {
        std::cerr << "simulating " << name << " at " << seq_len << " tokens...\n";
      }
      cases.push_back({std::move(predicted), sim::replay_plan(decode, plan, {!args.trace.empty(), !args.full_ring}), plan});
    }
  }
  return cases;
}

ordered_json links_json(const topologies::Topology& topology, const sim::ReplayResult& simulated) {
  ordered_json links = ordered_json::array();
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
    const double bytes = simulated.link_bytes[static_cast<size_t>(id)];
    if (bytes <= 0) continue;
    const topologies::Link& link = topology.link(id);
    const double capacity = sim::effective_bandwidth_Bps(link) * simulated.latency_s;
    links.push_back({{"from", topology.device(link.from).name},
                     {"to", topology.device(link.to).name},
                     {"tier", topologies::to_string(link.tier)},
                     {"bytes", bytes},
                     {"utilisation", capacity > 0 ? bytes / capacity : 0.0}});
  }
  return links;
}

void write_trace(std::ofstream& out, const std::string& path, const Case& c) {
  if (!(out << sim::chrome_trace(c.plan, c.simulated))) throw topologies::InputError({path, 0, 0}, "cannot write the file");
  std::cerr << "wrote " << path << " (open it in ui.perfetto.dev or chrome://tracing)\n";
}

void print_simulation(const SimulateArgs& args, bool compare) {
  if (!args.trace.empty() && fmt::parse_token_counts(args.seq_len).size() * args.algorithms.size() != 1) {
    throw std::invalid_argument("--trace needs one algorithm and one sequence length");
  }
  std::ofstream trace;  // opened before simulating, so that a bad path fails at once
  if (!args.trace.empty()) {
    trace.open(args.trace);
    if (!trace) throw topologies::InputError({args.trace, 0, 0}, "cannot write the file");
  }
  const topologies::Topology topology = load_topology(args.cluster);
  const std::vector<Case> cases = run_cases(args, topology);
  if (!args.trace.empty()) write_trace(trace, args.trace, cases.front());
  if (args.format == "json") {
    ordered_json rows = ordered_json::array();
    for (const Case& c : cases) {
      rows.push_back({{"algo", model::to_string(c.predicted.algorithm)}, {"cluster", topology.spec().name},
                      {"gpus", c.predicted.gpus}, {"seq_len", c.predicted.seq_len},
                      {"latency_s", c.simulated.latency_s}, {"model_latency_s", c.predicted.latency_s},
                      {"volume_bytes", {{"per_gpu", c.predicted.volume.per_gpu}, {"intra_node", c.predicted.volume.intra_node},
                                        {"inter_node", c.predicted.volume.inter_node}, {"total", c.predicted.volume.total}}},
                      {"peak_memory_bytes", c.predicted.memory.total},
                      {"links", compare ? ordered_json::array() : links_json(topology, c.simulated)}});
    }
    std::cout << rows.dump(2) << '\n';
    return;
  }
  std::cout << "model vs simulator (SimGrid, shared links) on " << topology.spec().name << ", "
            << (cases.empty() ? 0 : cases.front().predicted.gpus) << " GPUs, one attention layer\n\n";
  Table table({"tokens", "algorithm", "model", "simulated", "difference"});
  for (const Case& c : cases) {
    const double difference = (c.simulated.latency_s - c.predicted.latency_s) / c.predicted.latency_s;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%+.2f %%", 100 * difference);
    table.add_row({std::to_string(c.predicted.seq_len), model::to_string(c.predicted.algorithm),
                   fmt::format_duration(c.predicted.latency_s), fmt::format_duration(c.simulated.latency_s), percent});
  }
  table.print(std::cout);
}

void add_common(CLI::App& command, SimulateArgs& args) {
  add_decode_options(command, args, "Algorithms: ring, tree, tree-fused, tree-lse, allgather-merge", {"table", "json"});
  command.add_flag("--full-ring", args.full_ring,
                   "Replay every ring round, even once they repeat exactly (slower; the result is the same)");
}

}  // namespace

void add_simulate_commands(CLI::App& app) {
  auto* simulate = app.add_subcommand("simulate", "Replay decode plans in the SimGrid simulator (links shared)");
  auto simulate_args = std::make_shared<SimulateArgs>();
  add_common(*simulate, *simulate_args);
  simulate->add_option("--trace", simulate_args->trace, "Write a Chrome/Perfetto trace (one track per GPU) to FILE.json");
  simulate->callback([simulate_args] { print_simulation(*simulate_args, false); });
  auto* compare = app.add_subcommand("compare", "The model and the simulator side by side, with their difference");
  auto compare_args = std::make_shared<SimulateArgs>();
  add_common(*compare, *compare_args);
  compare->callback([compare_args] { print_simulation(*compare_args, true); });
}

}  // namespace treering::cli
