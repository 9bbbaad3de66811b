#include "simulated_decode.hpp"

#include "treering/sim/simulated_result.hpp"

namespace treering::cli {

SimulatedCase simulate_decode(const model::DecodeModel& decode, const model::Workload& workload, model::DecodeAlgorithm algorithm,
                              long long seq_len, const sim::ReplayOptions& options, bool check_memory,
                              const model::PlanOptions& plan_options) {
  SimulatedCase c;
  c.plan = decode.plan(algorithm, workload, seq_len, plan_options);
  c.predicted = decode.evaluate(c.plan);
  if (check_memory) model::check_fits(c.predicted, decode);
  c.simulated = sim::replay_plan(decode, c.plan, options);
  c.row.result = sim::simulated_result(decode, c.plan, c.predicted, c.simulated);
  c.row.engine = "sim";
  set_context(c.row, decode, c.plan);
  c.row.model_latency_s = c.predicted.latency_s;
  c.row.transfers_simulated = c.simulated.transfers_simulated;
  return c;
}

}  // namespace treering::cli
