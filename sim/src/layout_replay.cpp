// replay_layout (layout_replay.hpp): a layout's groups as one replay, and the layer and step around it.
#include "treering/sim/layout_replay.hpp"

#include <algorithm>

#include "treering/sim/moe_replay.hpp"

namespace treering::sim {
namespace {

model::Phase host_phase(const std::string& label, double time_s) {
  model::Phase phase;
  phase.kind = model::PhaseKind::host;
  phase.label = label;
  phase.time_s = time_s;
  return phase;
}

model::Phase collective_phase(const std::string& label, model::CollectiveOp op, double bytes, int element_bytes) {
  model::Phase phase;
  phase.kind = model::PhaseKind::collective;
  phase.label = label;
  phase.op = op;
  phase.bytes = bytes;
  phase.element_bytes = element_bytes;
  return phase;
}

// A post-attention group's plan: no KV cache, the step model's parts as fixed times, its collectives replayed.
model::DecodePlan post_plan(model::DecodeAlgorithm algorithm, const model::Workload& workload, long long seq_len,
                            const std::vector<int>& gpus, std::vector<model::Phase> phases) {
  model::DecodePlan plan;
  plan.algorithm = algorithm;
  plan.workload = workload;
  plan.seq_len = seq_len;
  plan.gpus = gpus;
  plan.shards.assign(gpus.size(), {});
  plan.phases = std::move(phases);
  return plan;
}

// Stage 1 (a layer's parts after the combine) and, for a step, stage 2 (the LM head and its logits), as the
// step model times the parts: per layer, its breakdown divided by the layers where it is a step's.
std::vector<std::vector<model::Phase>> post_stages(const model::StepResult& step, const model::Workload& workload) {
  const double per_layer = step.scope == model::Scope::step ? 1.0 / workload.layers : 1.0;
  const model::StepBreakdown& b = step.breakdown;
  const model::StepCollectives& bytes = step.collectives;
  const int element = workload.dtype_bytes;
  std::vector<std::vector<model::Phase>> stages;
  model::CollectiveOp before = bytes.attention_output_op, after = bytes.mlp_output_op;
  const bool experts = step.experts.has_value();
  if (experts) {  // expert parallelism: around the experts, or nothing with data-parallel attention
    before = model::CollectiveOp::reduce_scatter;
    after = model::CollectiveOp::allgather;
  }
  const bool hidden_collectives = !experts || step.experts->hidden_collectives;
  std::vector<model::Phase> layer{host_phase("QKV and output projections", b.projections_s * per_layer)};
  if (hidden_collectives)
    layer.push_back(collective_phase(std::string(model::to_string(before)) + " of the hidden state (attention output)",
                                     before, bytes.hidden_allreduce_bytes, element));
  layer.push_back(host_phase(experts ? "router and experts" : "MLP", b.mlp_s * per_layer));
  if (hidden_collectives)
    layer.push_back(collective_phase(std::string(model::to_string(after)) + " of the hidden state (MLP output)", after,
                                     bytes.hidden_allreduce_bytes, element));
  layer.push_back(host_phase("norms, rotary embedding, KV append", b.other_s * per_layer));
  stages.push_back(std::move(layer));
  if (step.scope == model::Scope::step) {
    stages.push_back({host_phase("LM head", b.lm_head_s),
                      collective_phase("all-gather of the logits", model::CollectiveOp::allgather,
                                       bytes.logits_allgather_bytes, element)});
  }
  return stages;
}

double last_finish(const StageOutcome& stage) {
  return *std::max_element(stage.finish_s.begin(), stage.finish_s.end());
}

}  // namespace

LayoutReplay replay_layout(const model::LayoutModel& layouts, model::DecodeAlgorithm algorithm,
                           const model::Workload& workload, long long seq_len, const model::PlanOptions& options,
                           const std::optional<model::StepResult>& step, const ReplayOptions& replay) {
  LayoutReplay out;
  const model::LayoutGroups& groups = layouts.groups();
  out.cp_groups = static_cast<int>(groups.cp_groups.size());
  for (int t = 0; t < out.cp_groups; ++t) out.plans.push_back(layouts.plan(t, algorithm, workload, seq_len, options));
  const std::vector<std::vector<int>> post_gpus = model::post_attention_groups(groups, algorithm);
  std::vector<std::vector<model::Phase>> stages;
  if (step) {
    stages = post_stages(*step, workload);
    for (const std::vector<int>& gpus : post_gpus) out.post_models.emplace_back(layouts.topology(), gpus);
    for (const std::vector<model::Phase>& phases : stages) {
      for (const std::vector<int>& gpus : post_gpus)
        out.plans.push_back(post_plan(algorithm, workload, seq_len, gpus, phases));
    }
  }
  for (size_t i = 0; i < out.plans.size(); ++i) {
    const bool cp = static_cast<int>(i) < out.cp_groups;
    const size_t post = cp ? 0 : (i - static_cast<size_t>(out.cp_groups)) % post_gpus.size();
    const int stage = cp ? 0 : 1 + static_cast<int>((i - static_cast<size_t>(out.cp_groups)) / post_gpus.size());
    out.groups.push_back({cp ? &layouts.cp_model(static_cast<int>(i)) : &out.post_models[post], &out.plans[i], stage});
  }
  out.replay = replay_groups(out.groups, replay);
  const StageOutcome& attention = out.replay.stages.front();
  out.attention_s = last_finish(attention);
  out.slowest_group = attention.critical_group;
  if (!step) return out;
  // A first call's cost (a host phase paid once per call) is in the replayed layer once, and once per step.
  double first_call_s = 0;
  for (const model::Phase& phase : out.plans.front().phases) first_call_s += phase.once_per_call ? phase.time_s : 0.0;
  // The TP communication: what the layer (the step) takes beyond the combine and the parts' fixed times.
  const double per_layer = step->scope == model::Scope::step ? 1.0 / workload.layers : 1.0;
  const model::StepBreakdown& b = step->breakdown;
  const double parts_s = (b.projections_s + b.mlp_s + b.other_s) * per_layer;
  const double layer_end_s = last_finish(out.replay.stages[1]);
  out.layer_s = layer_end_s - first_call_s;
  out.tp_communication_s = std::max(0.0, *out.layer_s - (out.attention_s - first_call_s) - parts_s);
  // expert parallelism: each MoE layer's exchanges, replayed on their own and added
  double exchange_s = 0;
  if (step->experts) {
    const model::ExpertStep& e = *step->experts;
    out.dispatch = simulate_moe_exchange(layouts.topology(), layouts.ep_group(), e.dispatch, replay);
    out.combine = simulate_moe_exchange(layouts.topology(), layouts.ep_group(), e.combine, replay);
    const double moved_s = out.dispatch->time_s + out.combine->time_s;
    exchange_s = e.micro_batches == 1 ? moved_s : e.micro_batches * (std::max(e.compute_s, moved_s) - e.compute_s);
  }
  if (step->scope == model::Scope::step) {
    const double head_s = last_finish(out.replay.stages[2]) - layer_end_s;
    const int moe = step->experts ? step->experts->moe_layers : 0;
    // the engine's own work a step (ImplProfile::engine_step: host waits, exposed GEMM FLOPs): on the GPU alone, no
    // links
    out.step_s = workload.layers * *out.layer_s + moe * exchange_s + head_s + b.engine_s + first_call_s;
    out.tp_communication_s = workload.layers * out.tp_communication_s + std::max(0.0, head_s - b.lm_head_s);
    *out.layer_s += moe * exchange_s / workload.layers;  // the mean layer
  } else {
    *out.layer_s += exchange_s;
  }
  return out;
}

std::vector<LinkLoad> link_loads(const topologies::Topology& topology, const ReplayResult& replay) {
  const model::LinkEfficiency efficiency = model::link_efficiency(topology);
  std::vector<LinkLoad> loads;
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
    const double bytes = replay.link_bytes[static_cast<size_t>(id)];
    if (!(bytes > 0)) continue;
    const topologies::Link& link = topology.link(id);
    const double capacity_bytes = link.bandwidth_Bps * efficiency.of(link) * replay.latency_s;
    loads.push_back({id, bytes, capacity_bytes > 0 ? bytes / capacity_bytes : 0.0});
  }
  return loads;
}

std::vector<LinkLoad> busiest_links(const topologies::Topology& topology, const ReplayResult& replay, size_t count) {
  std::vector<LinkLoad> loads = link_loads(topology, replay);
  const size_t kept = std::min(count, loads.size());
  std::partial_sort(loads.begin(), loads.begin() + static_cast<std::ptrdiff_t>(kept), loads.end(),
                    [](const LinkLoad& a, const LinkLoad& b) {
                      return a.utilisation != b.utilisation ? a.utilisation > b.utilisation : a.link < b.link;
                    });
  loads.resize(kept);
  return loads;
}

}  // namespace treering::sim
