// The cluster a command works on: a preset or file plus --nodes and --gpus-per-node.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "reporter.hpp"
#include "treering/model/plan.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/analysis/decode_cases.hpp"
#include "treering/analysis/workload_files.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results

struct ClusterArgs {
  std::string cluster;
  std::optional<int> nodes;
  std::optional<int> gpus_per_node;
  std::vector<std::string> settings;  // --set PATH=VALUE, in order
};

// `topo` commands take the cluster as their argument; the others as --cluster.
void add_cluster_positional(CLI::App& command, ClusterArgs& args);
void add_cluster_option(CLI::App& command, ClusterArgs& args, bool required = true);

topologies::Topology load_topology(const ClusterArgs& args);
// --nodes, --gpus-per-node and --set as the topologies library takes them.
topologies::ClusterOverrides overrides_of(const ClusterArgs& args);
// --set PATH=VALUE (repeatable) on a command that has a cluster.
void add_set_option(CLI::App& command, std::vector<std::string>& settings);

// What predict, simulate and compare share: a cluster, a workload, context lengths, algorithms, GPUs, format.
struct DecodeArgs {
  ClusterArgs cluster;
  std::string workload = "paper-mha16";
  std::string seq_len;
  std::vector<std::string> algorithms;
  std::vector<int> gpus;
  std::vector<int> batches;         // --batch 1,4: sequences decoded together, one or several
  std::optional<long long> tokens;  // also estimate generating this many tokens
  std::string split = "equal";      // --split equal|by-speed: how the KV cache is shared out (model::TokenSplit)
  bool prefill = false;             // add the model's prefill estimate
  std::string impl = "efficient";   // --impl NAME|FILE: the implementation profile predicted
  OutputFormat format = OutputFormat::table;
};
void add_decode_options(CLI::App& command, DecodeArgs& args, const std::string& algorithms_help,
                        const std::vector<OutputFormat>& formats);
// Takes back options add_decode_options added that a command has no use for ("--tokens", ...): given, they are an
// error ("The following arguments were not expected"), not silently ignored.
void drop_options(CLI::App& command, const std::vector<std::string>& names);

// --progress: progress lines on stderr even when it is not a terminal (replay_progress.hpp).
void add_progress_flag(CLI::App& command);

using analysis::load_workload;  // a preset or a file by name, beside the one of the arguments below

// The workload of --workload with --batch applied (one value: a list is an error for commands that take one).
model::Workload load_workload(const DecodeArgs& args);
// The same for each --batch value (the workload's own batch when none is given).
std::vector<model::Workload> load_workloads(const DecodeArgs& args);

void add_impl_option(CLI::App& command, std::string& impl);

// The plan options of --split and --impl.
model::PlanOptions plan_options(const DecodeArgs& args);

// The cases of predict and simulate: every --batch of the workload x --seq-len x --algo, on `layout`.
DecodeRequest decode_request(const DecodeArgs& args, const LayoutChoice& layout);

}  // namespace treering::cli
