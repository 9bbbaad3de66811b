#include "treering/analysis/plan_report.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/model/layout_model.hpp"
#include "treering/model/step.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/analysis/workload_files.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"

namespace treering::analysis {

using nlohmann::ordered_json;

namespace {

// The simulator's time per output token of a choice: every CP group's attention and every TP group's
// all-reduces of a layer replayed at once (sim/layout_replay.hpp), the parts between them the model's.
double simulated_step_s(const topologies::Topology& topology, const model::PlannedLayout& choice,
                        const model::Workload& workload, long long seq_len, const model::PlanOptions& options) {
  const model::LayoutModel layouts(topology, model::place_layout(topology, choice.layout));
  return *sim::replay_layout(layouts, choice.algorithm, workload, seq_len, options, choice.step, {}).step_s;
}

ordered_json choice_json(const model::PlannedLayout& c, const std::optional<double>& simulated_s) {
  const model::StepResult& s = c.step;
  ordered_json json = {
      {"layout", model::layout_name(c.layout)},
      {"attention_parallelism", model::to_string(c.layout.attention)},
      {"why", c.why},
      {"tp", c.layout.tp},
      {"cp", c.layout.cp},
      {"gpus", c.layout.gpus()},
      {"combine", combine_name(c)},
      {"algo", c.tp_only ? "none" : model::to_string(c.algorithm)},
      {"tp_only", c.tp_only},
      {"step_s", s.step_s},
      {"step_s_low", c.band.low_s},
      {"step_s_high", c.band.high_s},
      {"within_best_band", c.within_best_band},
      {"network_latency_s", c.network_latency_s},
      {"cross_node", {{"time_s", c.cross_node.time_s}, {"calls", c.cross_node.calls}, {"bytes", c.cross_node.bytes}}},
      {"tokens_per_s", s.tokens_per_s},
      {"batch", c.batch},
      {"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu},
      {"ep", c.layout.experts.ep},
      {"micro_batches", c.layout.experts.ep > 1 ? c.layout.experts.micro_batches : 1},
      {"attention_layer_s", c.attention.slowest.latency_s},
      {"breakdown",
       {{"attention_s", s.breakdown.attention_s},
        {"projections_s", s.breakdown.projections_s},
        {"mlp_s", s.breakdown.mlp_s},
        {"tp_communication_s", s.breakdown.tp_communication_s},
        {"other_s", s.breakdown.other_s},
        {"lm_head_s", s.breakdown.lm_head_s},
        {"ep_communication_s", s.breakdown.ep_communication_s},
        {"overlapped_s", s.breakdown.overlapped_s},
        {"engine_s", s.breakdown.engine_s}}},
      {"memory_bytes",
       {{"weights", s.memory.weights},
        {"kv_cache", s.memory.kv_cache},
        {"total", s.memory.total},
        {"capacity", s.memory.capacity},
        {"headroom", s.memory.capacity - s.memory.total}}},
      {"max_seq_len", s.memory.max_seq_len},
      {"max_batch", s.memory.max_batch},
      {"fits", c.fits},
      {"extrapolation", c.extrapolation}};
  if (simulated_s) json["simulated_step_s"] = *simulated_s;
  return json;
}

}  // namespace

int fastest_rank(const model::DeploymentPlan& plan) {
  const model::PlannedLayout* fastest = model::fastest_choice(plan);
  return fastest == nullptr ? 0 : static_cast<int>(fastest - plan.ranked.data()) + 1;
}

std::string combine_name(const model::PlannedLayout& choice) {
  if (choice.layout.attention == model::AttentionParallelism::data) return "none (own sequences)";
  return choice.tp_only ? "none (tp only)" : model::to_string(choice.algorithm);
}

PlanReport plan_report(const topologies::Topology& topology, const PlanChoice& choice,
                       const std::function<void(int, int)>& progress) {
  PlanReport report;
  report.workload = load_workload(choice.workload);
  if (choice.batch < 0) throw topologies::InputError("batch must be at least 1, got " + std::to_string(choice.batch));
  if (choice.batch > 0) report.workload.batch = choice.batch;
  if (choice.seq_len < 1) throw topologies::InputError("a context length must be at least 1 token");
  model::PlannerOptions options;
  options.gpus_max = choice.gpus_max;
  for (const std::string& name : choice.combines) options.combines.push_back(model::parse_decode_algorithm(name));
  options.plan.impl = load_impl(choice.impl);
  options.errors = model::prediction_errors(topology, *options.plan.impl, false);
  options.experts.kernel = model::parse_ep_kernel(choice.ep_kernel);
  if (choice.tpot_target_ms) {
    if (!(*choice.tpot_target_ms > 0)) throw topologies::InputError("--tpot-target must be more than 0 ms");
    options.tpot_target_s = *choice.tpot_target_ms * 1e-3;
  }
  report.errors = options.errors;
  report.plan = model::plan_deployment(topology, report.workload, choice.seq_len, options);
  if (report.plan.ranked.empty() && options.tpot_target_s) {
    const model::PlannedLayout* quickest = report.plan.too_slow.empty() ? nullptr : &report.plan.too_slow.front();
    throw topologies::InputError("no layout meets " + topologies::format_duration(*options.tpot_target_s) + " a token" +
                                 (quickest
                                      ? " (the quickest, " + model::layout_name(quickest->layout) + ", takes " +
                                            topologies::format_duration(quickest->step.step_s) + " at one sequence)"
                                      : std::string(": none fits")));
  }
  if (report.plan.ranked.empty()) {
    throw topologies::InputError("no layout fits: " + std::to_string(report.plan.not_fitting.size()) + " tried");
  }
  report.simulated_step_s.resize(report.plan.ranked.size());
  const int replays = std::min(choice.confirm, static_cast<int>(report.plan.ranked.size()));
  for (int i = 0; i < replays; ++i) {
    if (progress) progress(i, replays);
    report.simulated_step_s[static_cast<size_t>(i)] = simulated_step_s(
        topology, report.plan.ranked[static_cast<size_t>(i)], report.workload, choice.seq_len, options.plan);
  }
  return report;
}

ordered_json plan_json(const topologies::Topology& topology, const PlanChoice& choice, const PlanReport& report) {
  ordered_json ranked = ordered_json::array(), not_fitting = ordered_json::array();
  for (size_t i = 0; i < report.plan.ranked.size(); ++i)
    ranked.push_back(choice_json(report.plan.ranked[i], report.simulated_step_s[i]));
  for (const model::PlannedLayout& c : report.plan.not_fitting) not_fitting.push_back(choice_json(c, std::nullopt));
  ordered_json too_slow = ordered_json::array();
  for (const model::PlannedLayout& c : report.plan.too_slow) too_slow.push_back(choice_json(c, std::nullopt));
  const model::RelativeErrors& errors = report.errors;
  return {{"cluster", topology.spec().name},
          {"gpus", topology.gpu_count()},
          {"workload", report.workload.name},
          {"batch", report.workload.batch},
          {"seq_len", choice.seq_len},
          {"impl", choice.impl},
          {"uncertainty",
           {{"compute", errors.compute},
            {"communication", errors.communication},
            {"network_latency", errors.network_latency},
            {"source", errors.source}}},
          {"tpot_target_s", choice.tpot_target_ms ? ordered_json(*choice.tpot_target_ms * 1e-3) : ordered_json()},
          {"ranking", choice.tpot_target_ms ? kThroughputRankingRule : kRankingRule},
          {"fastest_rank", fastest_rank(report.plan)},
          {"ranked", ranked},
          {"not_fitting", not_fitting},
          {"too_slow", too_slow},
          {"skipped", report.plan.skipped}};
}

}  // namespace treering::analysis
