// Sweeps: every combination of node count, workload, batch, context length, algorithm and engine on one
// cluster, as tidy rows in a fixed order, run in worker processes (and, by sweep_ranks.hpp, across MPI ranks).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "treering/analysis/decode_cases.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/validate/report.hpp"

namespace treering::analysis {

struct SweepSpec {
  std::string cluster;     // a preset or a YAML file
  std::vector<int> nodes;  // empty: the cluster file's own count
  std::vector<std::string> workloads{"paper-mha16"};
  std::vector<int> batches;  // empty: each workload's own batch
  std::vector<long long> seq_lens;
  std::vector<model::DecodeAlgorithm> algorithms;
  std::vector<validate::Engine> engines{validate::Engine::model};
  std::vector<topologies::Setting> settings;  // --set PATH=VALUE on the cluster file
  model::TokenSplit split = model::TokenSplit::equal;
  std::string impl = "efficient";  // --impl: the implementation profile, a preset or a YAML file
  // --tp, --cp, --replicas, --placement, --tp-in-domain, --scope: one layout for every case, placed on each node
  // count's GPUs as predict places it (one of tp, cp alone takes the rest of the GPUs; neither: cp over all).
  LayoutChoice layout;
};

struct SweepCase {
  int nodes = 0;  // 0: the cluster file's count
  std::string workload;
  int batch = 0;  // 0: the workload's own
  long long seq_len = 0;
  model::DecodeAlgorithm algorithm = model::DecodeAlgorithm::tree;
  validate::Engine engine = validate::Engine::model;
};

// In this order, the last varying fastest: nodes, workload, batch, seq_len, algorithm, engine. Throws
// std::invalid_argument for an empty axis.
std::vector<SweepCase> sweep_cases(const SweepSpec& spec);

// Runs the cases `indices` (into sweep_cases(spec)) in `jobs` worker processes (sweep_workers.hpp; jobs 1: here,
// one after another); the rows come back in the order of `indices`, each exactly as computed here. Starts no
// thread: called from a single-threaded process, every fork (workers, simulations) is from a single-threaded
// one. `progress(done, total)` is called here, after each case. A case whose plan does not fit in memory is
// computed all the same (its peak_memory_bytes says so); a layer or step that does not fit is an error, as in
// predict. Every row is predict's (or simulate's) row for the same layout and case. Throws the error of the first case
// (in `indices`' order) that fails, as sweep_workers.hpp passes it on.
std::vector<DecodeRow> run_sweep(const SweepSpec& spec, const std::vector<std::size_t>& indices, int jobs,
                                 const std::function<void(std::size_t, std::size_t)>& progress = {});

// The rows as text: a CSV line or a JSON array element (two-space indented, as the whole file's), so that pieces
// computed apart join into the same file as one serial run. Every sweep row has model_latency_s (the model's
// rows their own latency), and with --scope layer|step the step's columns, so the CSV columns are the same whoever
// computes the first row.
std::string format_row(const DecodeRow& row, const std::string& format, const SweepSpec& spec);
std::string join_rows(const std::vector<std::string>& formatted, const std::string& format, const SweepSpec& spec);

}  // namespace treering::analysis
