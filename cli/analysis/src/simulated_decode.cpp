#include "treering/analysis/simulated_decode.hpp"

#include "treering/sim/simulated_result.hpp"

namespace treering::analysis {

SimulatedCase simulate_decode(const model::DecodeModel& decode, const model::Workload& workload,
                              model::DecodeAlgorithm algorithm, long long seq_len, const sim::ReplayOptions& options,
                              bool check_memory, const model::PlanOptions& plan_options) {
  SimulatedCase c;
  c.plan = decode.plan(algorithm, workload, seq_len, plan_options);
  c.predicted = decode.evaluate(c.plan);
  if (check_memory) model::check_fits(c.predicted, decode);
  c.simulated = sim::replay_plan(decode, c.plan, options);
  c.row.result = sim::simulated_result(decode, c.plan, c.predicted, c.simulated);
  c.row.engine = validate::Engine::sim;
  set_context(c.row, decode, c.plan);
  c.row.model_latency_s = c.predicted.latency_s;
  c.row.transfers_simulated = c.simulated.transfers_simulated;
  return c;
}

SimulatedCase simulate_layout(const model::LayoutModel& layouts, const model::Workload& workload,
                              model::DecodeAlgorithm algorithm, long long seq_len, const sim::ReplayOptions& options,
                              bool check_memory, const model::PlanOptions& plan_options,
                              const std::optional<model::StepResult>& step) {
  if (check_memory && !step) {  // before the replay: a plan that does not fit is refused at once
    const model::LayoutAttention predicted = layouts.attention(algorithm, workload, seq_len, plan_options);
    model::check_fits(predicted.slowest, layouts.cp_model(predicted.slowest_group));
  }
  SimulatedCase c;
  auto layout = std::make_shared<sim::LayoutReplay>(
      sim::replay_layout(layouts, algorithm, workload, seq_len, plan_options, step, options));
  const int t = layout->slowest_group;
  const model::DecodeModel& decode = layouts.cp_model(t);
  c.plan = layout->plans[static_cast<size_t>(t)];
  c.predicted = decode.evaluate(c.plan);
  c.simulated = layout->replay;
  c.row.result = sim::simulated_result(decode, c.plan, c.predicted, c.simulated);
  c.row.engine = validate::Engine::sim;
  set_context(c.row, decode, c.plan);
  c.row.transfers_simulated = c.simulated.transfers_simulated;
  c.layout = std::move(layout);
  return c;
}

std::string replay_summary(const sim::ReplayResult& replay) {
  return std::to_string(replay.gpus.size()) + " GPUs, " +
         (replay.groups == 1 ? std::string("one group") : std::to_string(replay.groups) + " groups at once");
}

}  // namespace treering::analysis
