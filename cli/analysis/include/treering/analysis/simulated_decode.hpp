// Decode plans replayed in the simulator, and their results in predict's form (DecodeRow), for simulate,
// compare, sweep and plan: one plan on its GPUs, or every group of a TP x CP layout at once.
#pragma once

#include <memory>
#include <optional>

#include "treering/analysis/decode_output.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/sim/replay.hpp"

namespace treering::analysis {

struct SimulatedCase {
  model::DecodeResult predicted;  // the model's: for `plan` (one group), or the layout's slowest group
  sim::ReplayResult simulated;    // the replay: every group of the layout
  model::DecodePlan plan;         // the slowest CP group's
  std::shared_ptr<const sim::LayoutReplay> layout;  // every plan replayed (a layout's; none for one plan)
  DecodeRow row;                                    // the simulated result in predict's form
  std::optional<double> healthy_s;                  // a what-if replay's latency without its degradation
};

// Plans, predicts (checking the plan fits in memory: model::check_fits) and replays one case on one group.
// check_memory false: a plan that does not fit is replayed all the same (its peak memory is in the row).
SimulatedCase simulate_decode(const model::DecodeModel& decode, const model::Workload& workload,
                              model::DecodeAlgorithm algorithm, long long seq_len,
                              const sim::ReplayOptions& options = {}, bool check_memory = true,
                              const model::PlanOptions& plan_options = {});

// Every CP group of `layouts` (and with `step`, every post-attention group after them) replayed at once: the row
// holds the slowest CP group's attention (its critical GPU's breakdown and phases, its plan's context), and the
// case's predicted result is the model's for that group. check_memory as simulate_decode's.
SimulatedCase simulate_layout(const model::LayoutModel& layouts, const model::Workload& workload,
                              model::DecodeAlgorithm algorithm, long long seq_len, const sim::ReplayOptions& options,
                              bool check_memory, const model::PlanOptions& plan_options,
                              const std::optional<model::StepResult>& step);

// "32 GPUs, 8 groups at once" (or "one group").
std::string replay_summary(const sim::ReplayResult& replay);

}  // namespace treering::analysis
