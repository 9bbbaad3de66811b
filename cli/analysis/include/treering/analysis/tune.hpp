// What `treering tune` reports of model::tune's strategies: the distinct ones (equivalents folded in) with their
// bands, the paper's tree and ring, and the best few replayed in the simulator. The command prints it as a table,
// CSV or JSON; Python's tune() returns its strategy records.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "treering/model/tune.hpp"
#include "treering/model/uncertainty.hpp"

namespace treering::analysis {

// The strategies (fastest first) with equivalents folded into the first of them: the same algorithm and a latency
// equal to 1e-9 relative (a leader that changes nothing on a symmetric cluster; fan-in 8 in an 8-GPU node is all
// at once), each with the count folded into it. Example: tree 10 us, tree 10 us, ring 12 us -> (tree, 1), (ring, 0).
std::vector<std::pair<const model::TunedStrategy*, int>> fold_equivalents(
    const std::vector<model::TunedStrategy>& tuned);

struct TuneRequest {
  model::Workload workload;
  long long seq_len = 0;
  std::vector<int> gpus;  // empty: every GPU
  model::PlanOptions options;
  int confirm = 5;  // the best this many distinct strategies replayed in the simulator
  std::function<void(const std::string& strategy)> on_simulating;  // progress, before each replay (may be empty)
};

struct ConfirmedStrategy {
  const model::TunedStrategy* tuned;
  double simulated_s;
};

// `shown`, `tree`, `ring` and `confirmed` point into `tuned` (moving the report keeps them valid).
struct TuneReport {
  std::vector<model::TunedStrategy> tuned;
  std::vector<model::StrategyBand> bands;                          // per tuned strategy
  std::vector<std::pair<const model::TunedStrategy*, int>> shown;  // distinct, with their equivalents
  const model::TunedStrategy* tree = nullptr;                      // the paper's tree and ring, as planned plainly
  const model::TunedStrategy* ring = nullptr;
  std::vector<ConfirmedStrategy> confirmed;
  int swaps = 0;  // pairs of the confirmed the simulator orders differently

  const model::StrategyBand& band(std::size_t shown_index) const {
    return bands[static_cast<std::size_t>(shown[shown_index].first - tuned.data())];
  }
  // Distinct strategies other than the best within its band: the model cannot tell them from the best.
  std::size_t others_within_best() const;
  std::string errors_legend() const;
};

TuneReport tune_report(const topologies::Topology& topology, const TuneRequest& request);

// The distinct strategies, one record each: rank, strategy, equivalents, algo, latency_s, latency_s_low,
// latency_s_high (null when unbounded), within_best_band, simulated_latency_s (the confirmed only).
nlohmann::ordered_json tune_strategies_json(const TuneReport& report);
// `treering tune --format json`: the best, tree and ring, the counts, and the strategies.
nlohmann::ordered_json tune_json(const TuneReport& report);

}  // namespace treering::analysis
