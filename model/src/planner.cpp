// plan_deployment (planner.hpp).
#include "treering/model/planner.hpp"

#include <algorithm>
#include <stdexcept>

#include "planner_parts.hpp"
#include "treering/model/extrapolation.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
using namespace detail;
namespace detail {

std::vector<int> powers_of_two_to(int most) {
  std::vector<int> values;
  for (int value = 1; value <= most; value *= 2) values.push_back(value);
  return values;
}

}  // namespace detail

namespace {

// cp values for a given tp: powers of two, and what fills the GPUs up when that is not one.
std::vector<int> cp_values(int tp, int gpus_max) {
  std::vector<int> values = powers_of_two_to(gpus_max / tp);
  if (gpus_max % tp == 0 && std::find(values.begin(), values.end(), gpus_max / tp) == values.end())
    values.push_back(gpus_max / tp);
  return values;
}

// Where a choice leaves the calibration: its combine (the first CP group's plan; the others are alike) and the
// step's collectives over the GPUs after the combine (the hidden state's all-reduces and the logits' all-gather,
// step_collectives), when there are several.
std::string extrapolation(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload,
                          long long seq_len, const PlannerOptions& options, const StepResult& step) {
  std::vector<std::string> reasons =
      extrapolations(layouts.topology(), layouts.plan(0, algorithm, workload, seq_len, options.plan));
  if (step.post_attention_gpus > 1) {
    const StepCollectives& collectives = step.collectives;
    const double low = std::min(collectives.hidden_allreduce_bytes, collectives.logits_allgather_bytes);
    const double high = std::max(collectives.hidden_allreduce_bytes, collectives.logits_allgather_bytes);
    for (const std::string& reason :
         collective_extrapolations(layouts.topology(), low, high, step.post_attention_gpus)) {
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
    }
  }
  return join_reasons(reasons);
}

}  // namespace

namespace detail {

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
  choice.cross_node = cross_node_traffic(layouts, choice, workload, seq_len, options.plan);
  choice.batch = workload.batch;
  const Layout& layout = choice.layout;
  choice.tokens_per_s_per_gpu = choice.step.tokens_per_s / (layout.tp * layout.cp);
  return choice;
}

}  // namespace detail

namespace {

bool is_communication(const Phase& phase) {
  return phase.kind == PhaseKind::collective || phase.kind == PhaseKind::transfers ||
         phase.kind == PhaseKind::ring_pass || phase.kind == PhaseKind::q_ring;
}

// The tie with the fastest first (least cross-node time, then calls, then bytes), then the rest by time.
bool ranks_before(const PlannedLayout& a, const PlannedLayout& b) {
  if (a.within_best_band != b.within_best_band) return a.within_best_band;
  if (a.within_best_band) {
    if (a.cross_node.time_s != b.cross_node.time_s) return a.cross_node.time_s < b.cross_node.time_s;
    if (a.cross_node.calls != b.cross_node.calls) return a.cross_node.calls < b.cross_node.calls;
    if (a.cross_node.bytes != b.cross_node.bytes) return a.cross_node.bytes < b.cross_node.bytes;
  }
  return a.step.step_s < b.step.step_s;
}

// The engines' layouts inside a TP group of tp GPUs: decode context parallelism (dcp 2 .. tp) and data-parallel
// attention; then every latent-attention choice's `why` against plain TP on as many GPUs.
void add_engine_layouts(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                        const PlannerOptions& options, const std::vector<DecodeAlgorithm>& combines, int gpus_max,
                        DeploymentPlan& plan) {
  for (int tp : powers_of_two_to(gpus_max)) {
    if (tp < 2) continue;
    for (int dcp = 2; dcp <= tp; dcp *= 2) {
      const Layout layout{tp / dcp, dcp, 1, AttentionParallelism::decode_context};
      const LayoutModel layouts(topology, place_layout(topology, layout));
      for (DecodeAlgorithm algorithm : combines) {
        if (output_split(algorithm) != OutputSplit::by_sequence)
          add_choice(layouts, algorithm, workload, seq_len, options, plan);
      }
    }
    const LayoutModel data(topology, place_layout(topology, Layout{tp, 1, 1, AttentionParallelism::data}));
    add_choice(data, DecodeAlgorithm::a2a, workload, seq_len, options, plan);
  }
  for (std::vector<PlannedLayout>* list : {&plan.ranked, &plan.not_fitting}) {
    for (PlannedLayout& choice : *list) {
      if (choice.layout.attention == AttentionParallelism::heads && choice.tp_only) continue;
      for (const std::vector<PlannedLayout>* other : {&plan.ranked, &plan.not_fitting}) {
        for (const PlannedLayout& tp : *other) {
          if (tp.tp_only && tp.layout.attention == AttentionParallelism::heads &&
              tp.layout.gpus() == choice.layout.gpus())
            choice.why = versus_tensor_parallel(choice, tp);
        }
      }
    }
  }
}

}  // namespace

const PlannedLayout* fastest_choice(const DeploymentPlan& plan) {
  const auto fastest =
      std::min_element(plan.ranked.begin(), plan.ranked.end(),
                       [](const PlannedLayout& a, const PlannedLayout& b) { return a.step.step_s < b.step.step_s; });
  return fastest == plan.ranked.end() ? nullptr : &*fastest;
}

CrossNodeTraffic cross_node_traffic(const LayoutModel& layouts, const PlannedLayout& choice, const Workload& workload,
                                    long long seq_len, const PlanOptions& options) {
  CrossNodeTraffic traffic;
  const DecodeResult& attention = choice.attention.slowest;
  if (!choice.tp_only && attention.domains > 1) {
    const DecodePlan plan = layouts.plan(choice.attention.slowest_group, choice.algorithm, workload, seq_len, options);
    const auto calls = std::count_if(plan.phases.begin(), plan.phases.end(), is_communication);
    traffic.calls += static_cast<long long>(calls) * workload.layers;
    traffic.time_s += attention.breakdown.inter_node_s * workload.layers;
    traffic.bytes += choice.attention.volume.inter_node * workload.layers;
  }
  const CommGroup& group = layouts.post_attention_group(choice.algorithm);
  if (group.domains > 1) {
    const StepCollectives& collectives = choice.step.collectives;
    const double p = group.ranks;
    const double groups = static_cast<double>(layouts.groups().gpus.size()) / p;
    const double per_group =
        group.domains * ((p - 1) / p) *
        (2 * collectives.hidden_allreduce_bytes * collectives.hidden_allreduces + collectives.logits_allgather_bytes);
    traffic.calls += collectives.hidden_allreduces + 1;
    traffic.time_s += choice.step.breakdown.tp_communication_s;
    traffic.bytes += groups * per_group;
  }
  if (const auto& experts = choice.step.experts; experts && experts->dispatch.routing.nodes > 1) {
    // every MoE layer's dispatch and combine, each micro-batch's, through every EP GPU's NIC
    const double exchanges = static_cast<double>(experts->moe_layers) * experts->micro_batches;
    traffic.calls += static_cast<long long>(2 * exchanges);
    traffic.time_s += std::max(0.0, choice.step.breakdown.ep_communication_s - choice.step.breakdown.overlapped_s);
    traffic.bytes += exchanges * experts->dispatch.routing.ep *
                     (experts->dispatch.nic_bytes_per_gpu + experts->combine.nic_bytes_per_gpu);
  }
  return traffic;
}

Band step_band(const StepResult& step, const DecodeResult& attention, int layers, const RelativeErrors& errors) {
  const double exposed = attention.breakdown.intra_node_s + attention.breakdown.inter_node_s;
  const double communication =
      std::min(step.step_s, layers * exposed + step.breakdown.tp_communication_s +
                                std::max(0.0, step.breakdown.ep_communication_s - step.breakdown.overlapped_s));
  return band_of(step.step_s - communication, communication, step_network_latency_s(step, attention, layers), errors);
}

double step_network_latency_s(const StepResult& step, const DecodeResult& attention, int layers) {
  return std::min(step.step_s,
                  layers * attention.breakdown.inter_node_latency_bound_s + step.breakdown.tp_network_latency_s);
}

DeploymentPlan plan_deployment(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                               const PlannerOptions& options) {
  const int gpus_max = options.gpus_max > 0 ? std::min(options.gpus_max, topology.gpu_count()) : topology.gpu_count();
  const std::vector<DecodeAlgorithm>& combines = options.combines.empty() ? all_decode_algorithms() : options.combines;
  DeploymentPlan plan;
  for (int tp : powers_of_two_to(gpus_max)) {
    try {
      head_slice(workload, tp);
    } catch (const topologies::InputError& why) {
      plan.skipped.push_back("tp " + std::to_string(tp) + ": " + why.what());
      continue;
    }
    for (int cp : cp_values(tp, gpus_max)) {
      const LayoutModel layouts(topology, place_layout(topology, Layout{tp, cp}));
      for (DecodeAlgorithm algorithm : cp == 1 ? std::vector<DecodeAlgorithm>{DecodeAlgorithm::a2a} : combines)
        add_choice(layouts, algorithm, workload, seq_len, options, plan);
    }
  }
  if (has_latent_attention(workload))
    add_engine_layouts(topology, workload, seq_len, options, combines, gpus_max, plan);
  if (workload.experts > 0) add_expert_layouts(topology, workload, seq_len, options, gpus_max, plan);
  std::sort(plan.not_fitting.begin(), plan.not_fitting.end(),
            [](const PlannedLayout& a, const PlannedLayout& b) { return a.step.memory.total < b.step.memory.total; });
  plan.tpot_target_s = options.tpot_target_s;
  if (options.tpot_target_s) {
    rank_by_throughput(plan);
    return plan;
  }
  if (const PlannedLayout* fastest = fastest_choice(plan)) {
    const Band best = fastest->band;
    for (PlannedLayout& choice : plan.ranked) choice.within_best_band = bands_overlap(choice.band, best);
  }
  std::stable_sort(plan.ranked.begin(), plan.ranked.end(), ranks_before);
  return plan;
}

}  // namespace treering::model
