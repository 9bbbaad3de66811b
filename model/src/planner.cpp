// plan_deployment (planner.hpp).
#include "treering/model/planner.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/model/extrapolation.hpp"

namespace treering::model {
namespace {

std::vector<int> powers_of_two_to(int most) {
  std::vector<int> values;
  for (int value = 1; value <= most; value *= 2) values.push_back(value);
  return values;
}

// cp values for a given tp: powers of two, and what fills the GPUs up when that is not one.
std::vector<int> cp_values(int tp, int gpus_max) {
  std::vector<int> values = powers_of_two_to(gpus_max / tp);
  if (gpus_max % tp == 0 && std::find(values.begin(), values.end(), gpus_max / tp) == values.end()) values.push_back(gpus_max / tp);
  return values;
}

// Where a choice leaves the calibration: its combine (the first CP group's plan; the others are alike) and the
// step's collectives over the GPUs after the combine (the hidden state's all-reduces and the logits' all-gather,
// step_collectives), when there are several.
std::string extrapolation(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                          const PlannerOptions& options, const StepResult& step) {
  std::vector<std::string> reasons = extrapolations(layouts.topology(), layouts.plan(0, algorithm, workload, seq_len, options.plan));
  if (step.post_attention_gpus > 1) {
    const StepCollectives collectives = step_collectives(workload, step.tokens_per_gpu);
    const double low = std::min(collectives.hidden_allreduce_bytes, collectives.logits_allgather_bytes);
    const double high = std::max(collectives.hidden_allreduce_bytes, collectives.logits_allgather_bytes);
    for (const std::string& reason : collective_extrapolations(layouts.topology(), low, high, step.post_attention_gpus)) {
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
    }
  }
  return join_reasons(reasons);
}

PlannedLayout evaluate_choice(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload,
                              long long seq_len, const PlannerOptions& options) {
  PlannedLayout choice;
  choice.layout = layouts.groups().layout;
  choice.tp_only = choice.layout.cp == 1;
  choice.algorithm = algorithm;
  choice.attention = layouts.attention(algorithm, workload, seq_len, options.plan);
  choice.step = evaluate_step(layouts, choice.attention, algorithm, workload, seq_len, Scope::step);
  choice.band = step_band(choice.step, choice.attention.slowest, workload.layers, options.errors);
  choice.network_latency_s = step_network_latency_s(choice.step, choice.attention.slowest, workload.layers);
  choice.fits = choice.step.memory.total <= choice.step.memory.capacity;
  choice.extrapolation = extrapolation(layouts, algorithm, workload, seq_len, options, choice.step);
  return choice;
}

}  // namespace

Band step_band(const StepResult& step, const DecodeResult& attention, int layers, const RelativeErrors& errors) {
  const double exposed = attention.breakdown.intra_node_s + attention.breakdown.inter_node_s;
  const double communication = std::min(step.step_s, layers * exposed + step.breakdown.tp_communication_s);
  return band_of(step.step_s - communication, communication, step_network_latency_s(step, attention, layers), errors);
}

double step_network_latency_s(const StepResult& step, const DecodeResult& attention, int layers) {
  return std::min(step.step_s, layers * attention.breakdown.inter_node_latency_bound_s + step.breakdown.tp_network_latency_s);
}

DeploymentPlan plan_deployment(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                               const PlannerOptions& options) {
  const int gpus_max = options.gpus_max > 0 ? std::min(options.gpus_max, topology.gpu_count()) : topology.gpu_count();
  const std::vector<DecodeAlgorithm>& combines = options.combines.empty() ? all_decode_algorithms() : options.combines;
  DeploymentPlan plan;
  for (int tp : powers_of_two_to(gpus_max)) {
    try {
      head_slice(workload, tp);
    } catch (const std::invalid_argument& why) {
      plan.skipped.push_back("tp " + std::to_string(tp) + ": " + why.what());
      continue;
    }
    for (int cp : cp_values(tp, gpus_max)) {
      const LayoutModel layouts(topology, place_layout(topology, Layout{tp, cp}));
      for (DecodeAlgorithm algorithm : cp == 1 ? std::vector<DecodeAlgorithm>{DecodeAlgorithm::a2a} : combines) {
        PlannedLayout choice = evaluate_choice(layouts, algorithm, workload, seq_len, options);
        (choice.fits ? plan.ranked : plan.not_fitting).push_back(std::move(choice));
      }
    }
  }
  std::sort(plan.ranked.begin(), plan.ranked.end(),
            [](const PlannedLayout& a, const PlannedLayout& b) { return a.step.step_s < b.step.step_s; });
  std::sort(plan.not_fitting.begin(), plan.not_fitting.end(),
            [](const PlannedLayout& a, const PlannedLayout& b) { return a.step.memory.total < b.step.memory.total; });
  for (PlannedLayout& choice : plan.ranked) choice.within_best_band = bands_overlap(choice.band, plan.ranked.front().band);
  return plan;
}

}  // namespace treering::model
