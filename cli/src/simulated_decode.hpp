// One decode plan replayed in the simulator, and its result in predict's form (DecodeRow), for simulate,
// compare and sweep.
#pragma once

#include "decode_output.hpp"
#include "treering/sim/replay.hpp"

namespace treering::cli {

struct SimulatedCase {
  model::DecodeResult predicted;
  sim::ReplayResult simulated;
  model::DecodePlan plan;
  DecodeRow row;  // the simulated result in predict's form
  std::optional<double> healthy_s;  // a what-if replay's latency without its degradation
};

// Plans, predicts (checking the plan fits in memory: model::check_fits) and replays one case.
// check_memory false: a plan that does not fit is replayed all the same (its peak memory is in the row).
SimulatedCase simulate_decode(const model::DecodeModel& decode, const model::Workload& workload, model::DecodeAlgorithm algorithm,
                              long long seq_len, const sim::ReplayOptions& options = {}, bool check_memory = true,
                              const model::PlanOptions& plan_options = {});

}  // namespace treering::cli
