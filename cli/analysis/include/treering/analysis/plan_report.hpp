// Which layout (tp x cp) and combine gives the lowest time per output token (model::plan_deployment), the best
// few replayed in the simulator: what `treering plan` prints and the Python module's plan() returns.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "treering/model/planner.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::analysis {

struct PlanChoice {
  std::string workload = "llama3.1-8b";  // a preset, a YAML file or a Hugging Face config.json
  long long seq_len = 0;
  int batch = 0;                      // 0: the workload's
  int gpus_max = 0;                   // 0: all
  std::vector<std::string> combines;  // empty: all
  std::string impl = "efficient";
  int confirm = 3;                        // the best this many replayed in the simulator
  std::optional<double> tpot_target_ms;   // keep what meets it at its largest batch, by tokens/s per GPU
  std::string ep_kernel = "low-latency";  // MoE workloads' EP choices: nccl | low-latency | normal
};

struct PlanReport {
  model::Workload workload;
  model::DeploymentPlan plan;
  std::vector<std::optional<double>> simulated_step_s;  // per ranked choice, for the best `confirm`
  model::RelativeErrors errors;
};

// Throws std::invalid_argument when no layout fits. `progress(i, n)` before replaying choice i of n.
PlanReport plan_report(const topologies::Topology& topology, const PlanChoice& choice,
                       const std::function<void(int, int)>& progress = {});

// How `ranked` is ordered with a time-per-token target.
inline constexpr const char* kThroughputRankingRule =
    "each choice at the largest batch whose time per output token meets the target and fits, ranked by output tokens "
    "per second per GPU, most first";
// How `ranked` is ordered, in words (the table's header and the JSON's "ranking").
inline constexpr const char* kRankingRule =
    "ranked by the bands: the choices whose band meets the fastest one's are a tie within the model's uncertainty and "
    "come first, least time across nodes first (then fewest cross-node calls and bytes); the rest follow, fastest "
    "first";

// The fastest choice's place in plan.ranked, from 1 (0: none fits).
int fastest_rank(const model::DeploymentPlan& plan);

// "none (tp only)" or the combine's name.
std::string combine_name(const model::PlannedLayout& choice);

// The report as `plan --format json` writes it.
nlohmann::ordered_json plan_json(const topologies::Topology& topology, const PlanChoice& choice,
                                 const PlanReport& report);

}  // namespace treering::analysis
