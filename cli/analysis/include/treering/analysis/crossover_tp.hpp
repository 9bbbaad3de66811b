// `treering crossover --vs tp`'s computation: where context parallelism (the planner's best tp x cp layout and
// combine with cp > 1) starts to beat plain tensor parallelism (its best cp = 1 layout), by context length and
// batch, in time per output token (model::plan_deployment).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "treering/analysis/crossover.hpp"
#include "treering/model/planner.hpp"

namespace treering::analysis {

// One (GPU count, batch, length): the fastest layout of each kind that fits.
struct Contest {
  int gpus = 0;
  int batch = 0;
  long long seq_len = 0;
  std::optional<model::PlannedLayout> cp;  // the fastest with cp > 1 that fits
  std::optional<model::PlannedLayout> tp;  // the fastest with cp = 1 that fits
  // > 1: context parallelism wins; both must fit.
  double speedup() const { return tp->step.step_s / cp->step.step_s; }
  bool uncertain() const { return cp && tp && model::bands_overlap(cp->band, tp->band); }
  bool cp_wins() const { return cp && (!tp || speedup() > 1); }
  const char* winner() const { return cp_wins() ? "cp" : tp ? "tp" : "none"; }
};

// Per GPU count, per batch (in the result's batch order): the shortest length from which cp wins at every longer
// one where a layout fits (nullopt: never).
struct CpVsTpSummary {
  int gpus = 0;
  std::vector<std::optional<long long>> cp_wins_from;
};

struct CpVsTpResult {
  std::vector<int> batches;              // those asked, or the workload's
  std::vector<Contest> contests;         // GPU counts outer, then lengths, batches inner
  model::RelativeErrors errors;          // the last GPU count's, behind the bands (for a legend)
  std::vector<CpVsTpSummary> summaries;  // one per GPU count, in order
};

// `on_case(gpus, seq_len, batch)`, when given, is called before each contest is planned (progress).
// Throws topologies::InputError for bad input (an engine other than model, an unknown combine, ...).
CpVsTpResult run_cp_vs_tp(const CrossoverRequest& request,
                          const std::function<void(int, long long, int)>& on_case = {});

// `treering crossover --vs tp --format json`'s records: one per contest.
nlohmann::ordered_json cp_vs_tp_json(const CpVsTpResult& result);

}  // namespace treering::analysis
