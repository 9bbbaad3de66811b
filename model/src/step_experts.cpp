// Expert parallelism in the step (step.hpp, ExpertStep): the MoE layer's exchanges, experts and micro-batches.
#include <algorithm>
#include <cmath>

#include "step_parts.hpp"

namespace treering::model::detail {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// A part at a micro-batch's tokens: the full batch's time (calibrated or not) scaled by what the rates give.
double at_tokens(double full_s, double rates_full_s, double rates_part_s) {
  return rates_full_s > 0 ? full_s * rates_part_s / rates_full_s : 0.0;
}

}  // namespace

int expert_tokens_per_gpu(const Layout& layout, int post_tokens, int post_ranks) {
  return layout.attention == AttentionParallelism::data ? post_tokens : ceil_div(post_tokens, std::max(1, post_ranks));
}

void place_experts(const Workload& w, const Layout& layout, const LayerWeights& layer, int tokens_per_gpu,
                   LayerShape& shape) {
  const ExpertLayout& e = layout.experts;
  if (e.ep <= 1 || w.experts <= 0) return;
  const double held = static_cast<double>(w.experts + e.redundant_experts) / e.ep;
  shape.mlp_resident = held * layer.experts_routed_each + layer.experts_shared + layer.router;
  const double dispatch_bytes = moe_message_bytes(w, MoeOp::dispatch, e.kernel, e.dispatch_dtype);
  const double combine_bytes = moe_message_bytes(w, MoeOp::combine, e.kernel, e.combine_dtype);
  const double tokens = static_cast<double>(ceil_div(tokens_per_gpu, e.micro_batches));
  if (e.kernel == EpKernel::low_latency) {
    shape.exchange_buffer_bytes = 2 * held * e.ep * tokens * (dispatch_bytes + combine_bytes);
  } else {  // the busiest GPU's copies, each way
    shape.exchange_buffer_bytes = 2 * tokens * w.experts_per_token * (dispatch_bytes + combine_bytes);
  }
}

ExpertStep apply_expert_parallelism(const LayoutModel& layouts, const ComputeRates& rates, const Workload& w,
                                    const LayerShape& shape, const CommGroup& post,
                                    const std::vector<std::vector<int>>& post_groups, StepBreakdown& b,
                                    double& layer_s) {
  const Layout& layout = layouts.groups().layout;
  const ExpertLayout& e = layout.experts;
  const int mb = e.micro_batches;
  const int post_tokens = shape.projection_tokens;
  ExpertStep x;
  x.micro_batches = mb;
  x.moe_layers = moe_layers(w);
  x.tokens_per_gpu = expert_tokens_per_gpu(layout, post_tokens, post.ranks);
  const int tokens = ceil_div(x.tokens_per_gpu, mb);  // a micro-batch's, each GPU
  MoeExchangeRequest request{MoeOp::dispatch, e.kernel, tokens, e.dispatch_dtype, e.redundant_experts, e.skew};
  x.dispatch = estimate_moe_exchange(layouts.topology(), layouts.ep_group(), w, request);
  request.op = MoeOp::combine;
  request.dtype = e.combine_dtype;
  x.combine = estimate_moe_exchange(layouts.topology(), layouts.ep_group(), w, request);
  // the experts: the router and the shared experts on its own tokens, the busiest GPU's routed experts
  const LayerWeights layer = layer_weights(w);
  const ExpertRouting& routing = x.dispatch.routing;
  const double routed = routing.busiest_experts_touched * layer.experts_routed_each;
  // FLOPs: each copy through one expert, 2 x copies x one expert's parameters = 2 x (copies / touched) x routed
  const double copies_per_expert =
      routing.busiest_experts_touched > 0 ? routing.busiest_copies_received / routing.busiest_experts_touched : 0.0;
  const double experts_s = part_s(rates, 1, layer.router, w.weight_bytes, tokens) +
                           part_s(rates, kMlpKernels, layer.experts_shared, w.weight_bytes, tokens) +
                           part_s(rates, kMlpKernels, routed, w.weight_bytes, copies_per_expert);
  // TP or DCP attention: the hidden states reduce-scattered over the group before, all-gathered after
  CollectiveTime tp;
  x.hidden_collectives = layout.attention != AttentionParallelism::data && post.ranks > 1;
  if (x.hidden_collectives) {
    const double bytes = static_cast<double>(ceil_div(post_tokens, mb)) * w.hidden_size * w.dtype_bytes;
    const CollectiveTime scatter =
        collective_time(layouts.topology(), post, post_groups, bytes, CollectiveOp::reduce_scatter);
    const CollectiveTime gather =
        collective_time(layouts.topology(), post, post_groups, bytes, CollectiveOp::allgather);
    tp = {scatter.time_s + gather.time_s, scatter.network_latency_s + gather.network_latency_s};
  }
  const double mb_tokens = ceil_div(post_tokens, mb);
  const double projections_s =
      at_tokens(b.projections_s,
                part_s(rates, kProjectionKernels, shape.projection_parameters, w.attention_weight_bytes, post_tokens),
                part_s(rates, kProjectionKernels, shape.projection_parameters, w.attention_weight_bytes, mb_tokens));
  const double other_s = at_tokens(
      b.other_s,
      part_s(rates, kOtherKernels, shape.other_parameters, w.dtype_bytes, post_tokens, shape.kv_append_bytes),
      part_s(rates, kOtherKernels, shape.other_parameters, w.dtype_bytes, mb_tokens, shape.kv_append_bytes / mb));
  x.compute_s = b.attention_s / mb + projections_s + other_s + experts_s + tp.time_s;
  x.exchange_s = x.dispatch.time_s + x.combine.time_s;
  x.experts_mlp_s = mb * experts_s;
  b.projections_s = mb * projections_s;
  b.other_s = mb * other_s;
  b.mlp_s = x.experts_mlp_s;
  b.tp_communication_s = mb * tp.time_s;
  b.tp_network_latency_s = mb * tp.network_latency_s;
  b.ep_communication_s = mb * x.exchange_s;
  layer_s = mb == 1 ? x.compute_s + x.exchange_s : mb * std::max(x.compute_s, x.exchange_s);
  b.overlapped_s = mb * (x.compute_s + x.exchange_s) - layer_s;
  return x;
}

}  // namespace treering::model::detail
