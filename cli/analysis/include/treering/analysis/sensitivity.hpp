// Which cluster parameters move the decode latency most: each parameter of the cluster file scaled by 1 +- step
// (every node group's or GPU model's own value) and the model re-run; the elasticity is d ln(latency) / d ln(p),
// by central difference:
//   e = ln(L((1 + step) p) / L((1 - step) p)) / ln((1 + step) / (1 - step)).
// Example: a latency bound by NIC bandwidth alone (L = S / B) gives e = -1; one that does not depend on it, 0.
// `treering sensitivity` and the Python module's treering.sensitivity both call this.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/plan.hpp"
#include "treering/model/workload.hpp"

namespace treering::analysis {

// Parameters looked for in a cluster file when none are named (shorthand paths: every node group's, GPU model's,
// the network's): NIC, fabric, HBM, launch, network figures and peak FLOPs.
const std::vector<std::string>& default_sensitivity_parameters();

struct SensitivityRequest {
  std::string cluster_text;          // the cluster file's text, settings applied
  std::string source_name;           // for messages: "preset:dgx-h100" or the path
  std::optional<int> nodes;          // as --nodes
  std::optional<int> gpus_per_node;  // as --gpus-per-node
  std::vector<int> gpus;             // the GPUs used (all when empty)
  model::Workload workload;
  long long seq_len = 0;
  std::vector<model::DecodeAlgorithm> algorithms;
  model::PlanOptions options;           // split and implementation profile
  std::vector<std::string> parameters;  // empty: the defaults the file has as positive numbers
  double step = 0.05;                   // in (0, 1)
};

struct SensitivityRow {
  std::string parameter;
  std::string value;                 // as written (the first group's)
  std::vector<double> elasticities;  // per algorithm
};

struct SensitivityResult {
  std::vector<double> latency_s;     // per algorithm, unscaled
  std::vector<SensitivityRow> rows;  // in the order of the parameters
};

// Throws std::invalid_argument for a step outside (0, 1), topologies::InputError for a path the file lacks.
SensitivityResult sensitivity(const SensitivityRequest& request);

}  // namespace treering::analysis
