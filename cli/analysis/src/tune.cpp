#include "treering/analysis/tune.hpp"

#include <cmath>

#include "treering/analysis/decode_output.hpp"
#include "treering/sim/replay.hpp"

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

double simulate(const topologies::Topology& topology, const std::vector<int>& gpus, const model::Strategy& s,
                const model::Workload& workload, long long seq_len) {
  const model::DecodeModel decode(topology, s.leader == 0 ? gpus : model::rotated_gpus(topology, gpus, s.leader));
  return sim::replay_plan(decode, decode.plan(s.algorithm, workload, seq_len, s.options)).latency_s;
}

// Pairs of confirmed strategies the two engines order differently.
int discordant_pairs(const std::vector<ConfirmedStrategy>& confirmed) {
  int count = 0;
  for (size_t i = 0; i < confirmed.size(); ++i) {
    for (size_t j = i + 1; j < confirmed.size(); ++j) {
      const double model_order = confirmed[i].tuned->result.latency_s - confirmed[j].tuned->result.latency_s;
      const double sim_order = confirmed[i].simulated_s - confirmed[j].simulated_s;
      count += model_order * sim_order < 0 ? 1 : 0;
    }
  }
  return count;
}

// JSON has no infinity: an unbounded side is null.
ordered_json bound_json(double seconds) { return std::isfinite(seconds) ? ordered_json(seconds) : ordered_json(); }

}  // namespace

std::vector<std::pair<const model::TunedStrategy*, int>> fold_equivalents(
    const std::vector<model::TunedStrategy>& tuned) {
  std::vector<std::pair<const model::TunedStrategy*, int>> out;
  for (const model::TunedStrategy& t : tuned) {
    if (!out.empty() && out.back().first->strategy.algorithm == t.strategy.algorithm &&
        std::abs(out.back().first->result.latency_s - t.result.latency_s) <= 1e-9 * t.result.latency_s) {
      ++out.back().second;
      continue;
    }
    out.push_back({&t, 0});
  }
  return out;
}

std::size_t TuneReport::others_within_best() const {
  std::size_t count = 0;
  for (std::size_t i = 1; i < shown.size(); ++i) count += band(i).within_best_band ? 1 : 0;
  return count;
}

std::string TuneReport::errors_legend() const {
  std::vector<model::RelativeErrors> errors;
  for (const model::StrategyBand& b : bands) errors.push_back(b.errors);
  return analysis::errors_legend(errors);
}

TuneReport tune_report(const topologies::Topology& topology, const TuneRequest& request) {
  TuneReport report;
  report.tuned = model::tune(topology, request.workload, request.seq_len, request.gpus, request.options);
  report.bands = model::strategy_bands(topology, report.tuned, *request.options.impl);
  report.shown = fold_equivalents(report.tuned);
  for (const auto& t : report.tuned) {
    const bool plain = !t.strategy.options.collective_algorithm && t.strategy.leader == 0;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::tree && !report.tree) report.tree = &t;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::ring && !report.ring) report.ring = &t;
  }
  for (size_t i = 0; i < report.shown.size() && static_cast<int>(i) < request.confirm; ++i) {
    const model::Strategy& strategy = report.shown[i].first->strategy;
    if (request.on_simulating) request.on_simulating(strategy.describe());
    report.confirmed.push_back(
        {report.shown[i].first, simulate(topology, request.gpus, strategy, request.workload, request.seq_len)});
  }
  report.swaps = discordant_pairs(report.confirmed);
  return report;
}

ordered_json tune_strategies_json(const TuneReport& r) {
  ordered_json rows = ordered_json::array();
  for (size_t i = 0; i < r.shown.size(); ++i) {
    const model::TunedStrategy& t = *r.shown[i].first;
    ordered_json row = {{"rank", i + 1},
                        {"strategy", t.strategy.describe()},
                        {"equivalents", r.shown[i].second},
                        {"algo", model::to_string(t.strategy.algorithm)},
                        {"latency_s", t.result.latency_s},
                        {"latency_s_low", r.band(i).band.low_s},
                        {"latency_s_high", bound_json(r.band(i).band.high_s)},
                        {"within_best_band", r.band(i).within_best_band}};
    if (i < r.confirmed.size()) row["simulated_latency_s"] = r.confirmed[i].simulated_s;
    rows.push_back(row);
  }
  return rows;
}

ordered_json tune_json(const TuneReport& r) {
  const model::TunedStrategy& best = r.tuned.front();
  return {{"best", best.strategy.describe()},           {"best_latency_s", best.result.latency_s},
          {"tree_latency_s", r.tree->result.latency_s}, {"ring_latency_s", r.ring->result.latency_s},
          {"strategies_tried", r.tuned.size()},         {"strategies_within_best_band", r.others_within_best()},
          {"engines_disagree_pairs", r.swaps},          {"strategies", tune_strategies_json(r)}};
}

}  // namespace treering::analysis
