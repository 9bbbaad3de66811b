// evaluate_step (step.hpp): the layers around the attention, the LM head, memory and the longest context.
#include "treering/model/step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "step_parts.hpp"
#include "treering/model/weights.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {

const char* to_string(Scope scope) {
  return scope == Scope::attention ? "attention" : scope == Scope::layer ? "layer" : "step";
}

Scope parse_scope(const std::string& text) {
  if (text == "attention") return Scope::attention;
  if (text == "layer") return Scope::layer;
  if (text == "step") return Scope::step;
  throw topologies::InputError("unknown scope '" + text + "' (attention, layer or step)");
}

namespace {

using namespace detail;

// The attention's weights on one GPU: split `split` ways (projection_split) with the heads, the output projection
// over the post-attention GPUs (whole with data-parallel attention), latent attention's down-projections whole.
double projection_parameters(const Workload& w, const LayerWeights& layer, const Layout& layout, int post_gpus) {
  const int split = projection_split(layout);
  const double o = layer.o / (layout.attention == AttentionParallelism::data ? 1 : post_gpus);
  if (has_latent_attention(w)) return layer.replicated + (layer.q + layer.v) / split + o;
  const double kv_share = static_cast<double>(head_slice(w, split).kv_heads) / w.kv_heads;  // of K and V's weights
  return layer.q / split + (layer.k + layer.v) * kv_share + o;
}

// Workloads that give only a parameter count (no MLP width) put everything but attention in the MLP, spread
// evenly over the layers; attention-only workloads (paper-mha16) have no weights at all.
LayerShape layer_shape(const Workload& w, const Layout& layout, int post_gpus, int tokens) {
  LayerShape shape;
  const LayerWeights layer = layer_weights(w);
  const bool data = layout.attention == AttentionParallelism::data;
  shape.projection_tokens = tokens;
  shape.mlp_tokens = data ? w.batch : tokens;
  shape.projection_parameters = projection_parameters(w, layer, layout, post_gpus);
  if (w.experts > 0) {
    const int routed_tokens = w.identical_sequences ? 1 : shape.mlp_tokens;  // identical sequences route alike
    const double touched = expected_experts_touched(w.experts, w.experts_per_token, routed_tokens);
    shape.mlp_parameters = (touched * layer.experts_routed_each + layer.experts_shared + layer.router) / post_gpus;
    shape.mlp_resident = (w.experts * layer.experts_routed_each + layer.experts_shared + layer.router) / post_gpus;
    shape.dense_mlp_parameters = layer.mlp_dense / post_gpus;
  } else if (layer.mlp_dense > 0) {
    shape.mlp_parameters = shape.mlp_resident = layer.mlp_dense / post_gpus;
  } else if (w.parameters > 0) {
    const double attention = attention_parameters(layer);
    shape.mlp_parameters = shape.mlp_resident = std::max(0.0, w.parameters / w.layers - attention) / post_gpus;
  }
  place_experts(w, layout, layer, expert_tokens_per_gpu(layout, tokens, post_gpus), shape);
  shape.other_parameters = layer.norms;
  // the new token's K and V (its latent) where this GPU keeps them
  shape.kv_append_bytes = tokens * cached_values_per_token(head_slice(w, projection_split(layout))) * w.kv_cache_bytes;
  return shape;
}

}  // namespace

namespace {

// Bytes per layer (the LM head's per step) each part reads, for the step calibration.
StepPartBytes part_bytes(const Workload& w, const LayerShape& shape, const PlanSizes& sizes, long long largest_shard,
                         int post_ranks) {
  StepPartBytes bytes;
  bytes.attention = static_cast<double>(largest_shard) * sizes.kv_bytes_per_token + sizes.q_bytes + sizes.o_bytes;
  bytes.projections = shape.projection_parameters * w.attention_weight_bytes;
  bytes.mlp = shape.mlp_parameters * w.weight_bytes;
  bytes.other = shape.other_parameters * w.dtype_bytes + shape.kv_append_bytes;
  bytes.lm_head = lm_head_parameters(w) / post_ranks * w.dtype_bytes;
  return bytes;
}

// Memory: every layer's share of the weights, the embeddings and LM head split over the group; the KV cache and
// the combine's buffers from the attention; activations: the hidden state a few times and the logits. The KV
// cache and the ring's blocks grow with the shard (the longest context that fits); the rest does not. The most
// sequences that fit at this length: the room over one sequence's share of this GPU's cache (the rest as at this
// batch), times the GPUs holding sequences of their own (data-parallel attention).
StepMemory step_memory(const Workload& w, const LayerShape& shape, const DecodeMemory& a, int post_ranks,
                       double hidden_bytes, int tokens, double capacity_bytes, long long largest_shard, int cp,
                       int sequences_here, int gpus_sharing) {
  StepMemory m;
  const int dense = w.experts > 0 ? dense_mlp_layers(w) : 0;
  m.weights =
      w.layers * (shape.projection_parameters * w.attention_weight_bytes + shape.other_parameters * w.dtype_bytes) +
      ((w.layers - dense) * shape.mlp_resident + dense * shape.dense_mlp_parameters) * w.weight_bytes +
      (embedding_parameters(w) + lm_head_parameters(w)) / post_ranks * w.dtype_bytes;
  m.kv_cache = a.kv_cache;
  m.buffers = a.receive_buffers + a.partial_states + a.workspace + shape.exchange_buffer_bytes;
  m.activations = 4 * hidden_bytes + static_cast<double>(tokens) * w.vocab_size * 4;
  m.total = m.weights + m.kv_cache + m.buffers + m.activations;
  m.capacity = capacity_bytes;
  const double per_token = largest_shard > 0 ? (a.kv_cache + a.receive_buffers) / largest_shard : 0.0;
  const double room = m.capacity - (m.total - a.kv_cache - a.receive_buffers);
  m.max_seq_len = room <= 0 || per_token <= 0 ? 0 : static_cast<long long>(std::floor(room / per_token)) * cp;
  // a sequence's share of this GPU's cache: the attention's KV cache over the sequences it holds
  const double per_sequence = (a.kv_cache + a.receive_buffers) / std::max(1, sequences_here);
  m.max_batch =
      room <= 0 || per_sequence <= 0 ? 0 : static_cast<long long>(std::floor(room / per_sequence)) * gpus_sharing;
  return m;
}

// A part as a real step measured it (topologies::StepPartCalibration): fixed + bytes / (rated HBM x efficiency),
// or its FLOPs at peak where slower.
double calibrated_s(const topologies::StepPartCalibration& c, const ComputeRates& rates, double bytes, double flops) {
  return c.fixed_s + std::max(bytes / (rates.hbm_rated_Bps * c.efficiency), flops / rates.peak_flops);
}

// The calibrated parts replace the rates' figures (per layer; the LM head per step). The attention keeps what its
// layer adds to the kernel (exposed communication, host time) and swaps the kernel's time.
// The attention's line: the calibration's for the kernel's shape (head dim, query heads per KV head), else its
// line for every shape (efficiency 0: none).
topologies::StepPartCalibration attention_line(const ComputeRates& rates, const Workload& slice) {
  const int group = slice.kv_heads > 0 ? slice.query_heads / slice.kv_heads : 0;
  for (const topologies::StepAttentionShape& shape : rates.step_attention_shapes) {
    if (shape.head_dim == slice.head_dim && shape.group == group) return shape.line;
  }
  return rates.step[0];
}

int apply_step_calibration(const ComputeRates& rates, const LayerShape& shape, const StepPartBytes& bytes,
                           const topologies::StepPartCalibration& attention, double attention_kernel_s,
                           double attention_flops, StepBreakdown& b) {
  const auto& c = rates.step;
  int parts = 0;
  auto use = [&](int part, double& time_s, double part_bytes, double flops) {
    if (c[static_cast<std::size_t>(part)].efficiency <= 0) return;
    time_s = calibrated_s(c[static_cast<std::size_t>(part)], rates, part_bytes, flops);
    ++parts;
  };
  if (attention.efficiency > 0) {
    b.attention_s = std::max(0.0, b.attention_s - attention_kernel_s) +
                    calibrated_s(attention, rates, bytes.attention, attention_flops);
    ++parts;
  }
  use(1, b.projections_s, bytes.projections, 2.0 * shape.projection_tokens * shape.projection_parameters);
  use(2, b.mlp_s, bytes.mlp, 2.0 * shape.mlp_tokens * shape.mlp_parameters);
  use(3, b.other_s, bytes.other, 0.0);
  return parts;
}

}  // namespace

StepCollectives step_collectives(const Workload& w, int tokens) {
  StepCollectives c;
  c.hidden_allreduce_bytes = static_cast<double>(tokens) * w.hidden_size * w.dtype_bytes;
  c.hidden_allreduces = 2 * w.layers;
  c.logits_allgather_bytes = static_cast<double>(tokens) * w.vocab_size * w.dtype_bytes;
  return c;
}

// Data-parallel attention: the whole batch's hidden states gathered before the MLP and scattered after it; the LM head
// runs as the MLP does, split over the GPUs on the whole batch, its logits all-gathered.
StepCollectives step_collectives(const Workload& w, int tokens, const Layout& layout) {
  if (layout.attention != AttentionParallelism::data) return step_collectives(w, tokens);
  StepCollectives c = step_collectives(w, w.batch);
  c.attention_output_op = CollectiveOp::allgather;
  c.mlp_output_op = CollectiveOp::reduce_scatter;
  return c;
}

namespace {

// The layer's parts after the attention, as the rates (or the step calibration) cost them.
void cost_parts(const ComputeRates& rates, const Workload& w, const LayerShape& shape, StepBreakdown& b,
                double& dense_mlp_s) {
  b.projections_s =
      part_s(rates, kProjectionKernels, shape.projection_parameters, w.attention_weight_bytes, shape.projection_tokens);
  b.mlp_s =
      part_s(rates, kMlpKernels + (w.experts > 0 ? 1 : 0), shape.mlp_parameters, w.weight_bytes, shape.mlp_tokens);
  dense_mlp_s = part_s(rates, kMlpKernels, shape.dense_mlp_parameters, w.weight_bytes, shape.mlp_tokens);
  b.other_s = part_s(rates, kOtherKernels, shape.other_parameters, w.dtype_bytes, shape.projection_tokens,
                     shape.kv_append_bytes);
}

// A layer's two TP collectives over the post-attention groups.
CollectiveTime layer_collectives_time(const LayoutModel& layouts, const CommGroup& post,
                                      const std::vector<std::vector<int>>& groups, const StepCollectives& c) {
  const CollectiveTime first =
      collective_time(layouts.topology(), post, groups, c.hidden_allreduce_bytes, c.attention_output_op);
  const CollectiveTime second =
      collective_time(layouts.topology(), post, groups, c.hidden_allreduce_bytes, c.mlp_output_op);
  return {first.time_s + second.time_s, first.network_latency_s + second.network_latency_s};
}

// vLLM's PagedAttention kernels' reads of a layer (for a fit to weigh, latent attention aside), and where the engine
// decodes with them, their time in place of the model's attention kernel.
void apply_paged_attention(const topologies::ImplProfile* impl, const ComputeRates& rates, const Workload& slice,
                           long long context, int cp, StepResult& r) {
  const bool paged = impl != nullptr && impl->engine_step && impl->engine_step->paged_attention;
  if (!paged) {
    if (!has_latent_attention(slice)) r.paged_attention = paged_attention_reads(slice, context);
    return;
  }
  if (cp > 1) {
    throw topologies::InputError(
        "engine_step.paged_attention: vLLM's PagedAttention decodes each sequence's whole "
        "context on its TP group; it has no decode context parallelism (use --cp 1, got " +
        std::to_string(cp) + ")");
  }
  const topologies::PagedAttention& kernels = *impl->engine_step->paged_attention;
  r.paged_attention = paged_attention_reads(slice, context, paged_attention_captured_tokens(slice, kernels));
  r.paged_attention.v1_occupancy_scale = paged_v1_occupancy_scale(slice, kernels);
  r.breakdown.attention_s = paged_attention_s(r.paged_attention, kernels, rates.hbm_rated_Bps);
}

// The parts of a breakdown a step sums over its layers.
constexpr double StepBreakdown::*kLayerParts[] = {&StepBreakdown::attention_s,
                                                  &StepBreakdown::projections_s,
                                                  &StepBreakdown::mlp_s,
                                                  &StepBreakdown::other_s,
                                                  &StepBreakdown::tp_communication_s,
                                                  &StepBreakdown::tp_network_latency_s,
                                                  &StepBreakdown::ep_communication_s,
                                                  &StepBreakdown::overlapped_s};

// Scope::step: every layer (the MoE ones as `r` has them, the dense first ones as `dense`), the LM head and the
// logits' all-gather, and the engine's own work a step (its host's, its GEMMs' exposed FLOPs) where the profile has
// one.
void add_whole_step(const LayoutModel& layouts, const CommGroup& post, const std::vector<std::vector<int>>& groups,
                    const ComputeRates& rates, const Workload& w, const LayerShape& shape,
                    const LayoutAttention& attention, const StepBreakdown& dense, const topologies::ImplProfile* impl,
                    StepResult& r) {
  StepBreakdown& b = r.breakdown;
  const int moe = w.layers - r.dense_layers;
  for (double StepBreakdown::*part : kLayerParts) b.*part = moe * (b.*part) + r.dense_layers * (dense.*part);
  const double lm_head = lm_head_parameters(w) / post.ranks;
  b.lm_head_s = part_s(rates, 1, lm_head, w.dtype_bytes, shape.mlp_tokens);
  const topologies::StepPartCalibration& head = rates.step[4];
  if (head.efficiency > 0) {
    b.lm_head_s = calibrated_s(head, rates, r.part_bytes.lm_head, 2.0 * shape.mlp_tokens * lm_head);
    ++r.calibrated_parts;
  }
  for (double* part : {&r.part_bytes.attention, &r.part_bytes.projections, &r.part_bytes.mlp, &r.part_bytes.other}) {
    *part *= w.layers;
  }
  const CollectiveTime logits =
      collective_time(layouts.topology(), post, groups, r.collectives.logits_allgather_bytes, CollectiveOp::allgather);
  b.tp_communication_s += logits.time_s;
  b.tp_network_latency_s += logits.network_latency_s;
  r.paged_attention.v1_bytes *= w.layers;
  r.paged_attention.v2_bytes *= w.layers;
  r.gemm_flops_at_peak_s = step_gemm_flops(w, shape.mlp_tokens, post.ranks) / rates.peak_flops;
  r.tp_collectives = post.ranks > 1 ? r.collectives.hidden_allreduces + 1 : 0;  // and the logits' all-gather
  if (impl != nullptr && impl->engine_step) {
    b.engine_s = impl->engine_step->step_s(w.batch, r.gemm_flops_at_peak_s, r.tp_collectives, w.layers);
  }
  r.step_s = moe * r.layer_s + r.dense_layers * r.dense_layer_s + b.lm_head_s + logits.time_s + b.engine_s +
             attention.slowest.first_call_s;
}

}  // namespace

StepResult evaluate_step(const LayoutModel& layouts, const LayoutAttention& attention, DecodeAlgorithm algorithm,
                         const Workload& w, long long seq_len, Scope scope) {
  if (scope == Scope::attention) throw std::logic_error("evaluate_step: the attention scope has nothing to add");
  const Layout layout = layouts.groups().layout;
  const CommGroup& post = layouts.post_attention_group(algorithm);
  const ComputeRates& rates = layouts.cp_model(attention.slowest_group).slowest_rates();
  const DecodePlan slowest_plan = layouts.plan(attention.slowest_group, algorithm, w, seq_len);
  StepResult r;
  r.scope = scope;
  r.post_attention_gpus = post.ranks;
  r.tokens_per_gpu = output_split(algorithm) == OutputSplit::by_sequence
                         ? static_cast<int>(owned_sequences(w.batch, layout.cp, 0).count)
                         : slowest_plan.workload.batch;
  const LayerShape shape = layer_shape(w, layout, post.ranks, r.tokens_per_gpu);
  StepBreakdown& b = r.breakdown;
  b.attention_s = attention.slowest.latency_s - attention.slowest.first_call_s;
  cost_parts(rates, w, shape, b, r.dense_mlp_s);
  r.dense_layers = w.experts > 0 ? dense_mlp_layers(w) : 0;
  long long largest_shard = 0;
  for (const Shard& shard : slowest_plan.shards) largest_shard = std::max(largest_shard, shard.count);
  r.part_bytes = part_bytes(w, shape, slowest_plan.sizes, largest_shard, post.ranks);
  const Workload& slice = slowest_plan.workload;
  r.calibrated_parts = apply_step_calibration(rates, shape, r.part_bytes, attention_line(rates, slice),
                                              attention_time_s(rates, slice, slowest_plan.sizes, largest_shard),
                                              attention_flops(slice, largest_shard), b);
  apply_paged_attention(attention.impl.get(), rates, slice, seq_len, layout.cp, r);
  r.collectives = step_collectives(w, r.tokens_per_gpu, layout);
  const std::vector<std::vector<int>> post_groups = post_attention_groups(layouts.groups(), algorithm);
  const CollectiveTime hidden = layer_collectives_time(layouts, post, post_groups, r.collectives);
  b.tp_communication_s = hidden.time_s;
  b.tp_network_latency_s = hidden.network_latency_s;
  r.layer_s = b.attention_s + b.projections_s + b.mlp_s + b.other_s + b.tp_communication_s;
  StepBreakdown dense = b;  // a dense first layer of an MoE model: its dense MLP for the experts
  dense.mlp_s = r.dense_mlp_s;
  r.dense_layer_s = r.dense_layers > 0 ? r.layer_s - b.mlp_s + r.dense_mlp_s : 0.0;
  if (layout.experts.ep > 1 && w.experts <= 0)
    throw topologies::InputError("expert parallelism (--ep) needs an MoE workload: " + w.name +
                                 " has no routed experts");
  if (layout.experts.ep > 1) {
    r.experts = apply_expert_parallelism(layouts, rates, w, shape, post, post_groups, b, r.layer_s);
    r.part_bytes.mlp = (r.experts->dispatch.routing.busiest_experts_touched * layer_weights(w).experts_routed_each +
                        layer_weights(w).experts_shared + layer_weights(w).router) *
                       w.weight_bytes;
  }
  r.step_s = r.layer_s;
  if (scope == Scope::step)
    add_whole_step(layouts, post, post_groups, rates, w, shape, attention, dense, attention.impl.get(), r);
  r.tokens_per_s = scope == Scope::step ? w.batch / r.step_s : 0.0;  // one layer makes no token
  r.memory = step_memory(w, shape, attention.slowest.memory, post.ranks, r.collectives.hidden_allreduce_bytes,
                         shape.mlp_tokens, rates.hbm_capacity_bytes, largest_shard, layout.cp,
                         slowest_plan.workload.batch, layout.attention == AttentionParallelism::data ? layout.tp : 1);
  return r;
}

}  // namespace treering::model
