// What the step model (step.cpp) and its expert-parallel layers (step_experts.cpp) share: one GPU's share of a
// layer, a part's time from the rates, and a post-attention collective's time. Private to model.
#pragma once

#include <vector>

#include "treering/model/weights.hpp"

#include "treering/model/collectives.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::model::detail {

// Kernels a layer launches besides the attention: QKV and output projections; gate/up, activation and down
// (plus the router with experts); two norms, the rotary embedding and the KV append.
constexpr int kProjectionKernels = 2;
constexpr int kMlpKernels = 3;
constexpr int kOtherKernels = 4;

struct LayerShape {  // one GPU's share of a layer
  double projection_parameters = 0;
  double mlp_parameters = 0;        // read per step (the experts the tokens route to)
  double mlp_resident = 0;          // held (every expert)
  double dense_mlp_parameters = 0;  // an MoE model's dense first layers' MLP (read and held)
  double other_parameters = 0;      // norms
  double kv_append_bytes = 0;
  int projection_tokens = 1;         // the tokens the projections take (data-parallel attention: its own sequences)
  int mlp_tokens = 1;                // the tokens the MLP takes (data-parallel attention: the whole batch)
  double exchange_buffer_bytes = 0;  // expert parallelism: the dispatch and combine kernels' receive buffers
};

// Expert parallelism's routed experts a GPU holds (replicas included) and the exchange kernels' buffers, into
// `shape` (layout.experts.ep > 1 and an MoE workload; else nothing changes). The low-latency kernel keeps a slot
// for every token any rank may send each of its experts, twice (two buffers alternate between calls): 2 x local
// experts x ep x tokens x (dispatch + combine message); the others the busiest GPU's bytes.
void place_experts(const Workload& workload, const Layout& layout, const LayerWeights& layer, int tokens_per_gpu,
                   LayerShape& shape);

// A part's time: its launches, then its weights streamed or its FLOPs, whichever is slower.
double part_s(const ComputeRates& rates, int kernels, double parameters, double weight_bytes, double tokens,
              double extra_bytes = 0);

struct CollectiveTime {
  double time_s = 0;
  double network_latency_s = 0;  // time_s when the group spans domains and the latency is at least the transfer
};

// `post`'s collective, run by every post-attention group at once (`groups`): where they may share links, the
// slowest with what they share (link_sharing.hpp).
CollectiveTime collective_time(const topologies::Topology& topology, const CommGroup& post,
                               const std::vector<std::vector<int>>& groups, double bytes,
                               CollectiveOp op = CollectiveOp::allreduce);

// Replaces an MoE layer's MLP and its TP collectives with expert parallelism's (step.hpp, ExpertStep): `b` is one
// layer's breakdown, `layer_s` its time; both are rewritten.
ExpertStep apply_expert_parallelism(const LayoutModel& layouts, const ComputeRates& rates, const Workload& workload,
                                    const LayerShape& shape, const CommGroup& post,
                                    const std::vector<std::vector<int>>& post_groups, StepBreakdown& b,
                                    double& layer_s);

// Tokens a GPU dispatches a layer: its own (data-parallel attention) or its share of its post-attention group's.
int expert_tokens_per_gpu(const Layout& layout, int post_tokens, int post_ranks);

}  // namespace treering::model::detail
