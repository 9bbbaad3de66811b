// Expert parallelism in the step (step.hpp, ExpertStep): deepseek-v3 on DGX H100 nodes (HBM 3.35 TB/s x 0.80 =
// 2.68e12 B/s effective, 989 TFLOP/s, 3 us launches), by hand around the routing and exchange figures that
// test_expert_routing.cpp and test_moe_exchange.cpp derive.
#include <doctest/doctest.h>

#include <algorithm>

#include "treering/model/collectives.hpp"
#include "treering/model/step.hpp"
#include "treering/model/weights.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;
using model::Scope;

namespace {

constexpr double kHbm_Bps = 3.35e12 * 0.80;
constexpr double kLaunch_s = 3e-6;
// deepseek-v3: one routed expert 3 x 7,168 x 2,048 = 44,040,192 parameters, one shared expert the same, the router
// 7,168 x 256 = 1,835,008; all at the MLP's element type (fp8, 1 B), as the model's weights count them.
constexpr double kExpert = 44040192.0;
constexpr double kRouter = 1835008.0;

const topologies::Topology& two_dgx() {
  static const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  return topology;
}

model::StepResult step_of(const model::Layout& layout, int batch, Scope scope = Scope::layer) {
  model::Workload w = model::find_workload("deepseek-v3");
  w.batch = batch;
  const model::LayoutModel layouts(two_dgx(), model::place_layout(two_dgx(), layout));
  const model::LayoutAttention attention = layouts.attention(DecodeAlgorithm::tree, w, 4096);
  return model::evaluate_step(layouts, attention, DecodeAlgorithm::tree, w, 4096, scope);
}

model::Layout dp_attention_ep16(int micro_batches = 1) {
  model::Layout layout{16, 1, 1, model::AttentionParallelism::data};
  layout.experts.ep = 16;
  layout.experts.micro_batches = micro_batches;
  return layout;
}

}  // namespace

TEST_CASE("DP attention x EP 16: each GPU dispatches its own sequences; the busiest GPU's experts by hand") {
  const model::StepResult s = step_of(dp_attention_ep16(), 16 * 32);  // 32 sequences a GPU
  REQUIRE(s.experts);
  const model::ExpertStep& e = *s.experts;
  CHECK(e.tokens_per_gpu == 32);
  CHECK(e.moe_layers == 58);  // 61 layers, the first 3 dense
  CHECK(e.dispatch.routing.ep == 16);
  CHECK(e.dispatch.kernel == model::EpKernel::low_latency);
  CHECK(e.dispatch.dtype == "fp8");
  CHECK(e.combine.dtype == "bf16");
  // EP 16: 16 experts a GPU. The busiest GPU receives C copies (expert_routing) and touches all 16 of its experts
  // (16 x (1 - (15/16)^C) = 16 - 1e-7 at C ~ 290: the 1e-6 below): 16 x 44.04 M fp8 parameters = 704.6 MB -> 262.9 us,
  // 3 launches; the shared expert 44.04 MB -> 16.43 us, 3 launches; the router 1.84 MB -> 0.68 us, 1 launch. FLOPs (2 x
  // C x 44 M = 25.5 GFLOP, 26 us) stay under the weights' time.
  CHECK(e.dispatch.routing.busiest_experts_touched == doctest::Approx(16.0).epsilon(1e-6).scale(1e-12));
  const double experts_s = 7 * kLaunch_s + (17 * kExpert + kRouter) / kHbm_Bps;
  CHECK(e.experts_mlp_s == doctest::Approx(experts_s).epsilon(1e-6).scale(1e-12));
  CHECK(s.breakdown.mlp_s == doctest::Approx(experts_s).epsilon(1e-6).scale(1e-12));
  // DP attention: no TP collective around the experts; the exchanges are the layer's communication
  CHECK(s.breakdown.tp_communication_s == 0);
  CHECK(s.breakdown.ep_communication_s == doctest::Approx(e.dispatch.time_s + e.combine.time_s).scale(1e-12));
  const model::StepBreakdown& b = s.breakdown;
  CHECK(s.layer_s ==
        doctest::Approx(b.attention_s + b.projections_s + b.mlp_s + b.other_s + b.ep_communication_s).scale(1e-12));
  CHECK(b.overlapped_s == 0);
}

TEST_CASE("EP holds E / ep routed experts a GPU, the shared expert and router whole; the kernel's buffers") {
  const model::StepResult s = step_of(dp_attention_ep16(), 16 * 32);
  model::Layout tp_moe{16, 1, 1, model::AttentionParallelism::data};  // the same without EP: experts split 16 ways
  const model::StepResult split = step_of(tp_moe, 16 * 32);
  // per MoE layer, EP: 16 experts + shared + the router; TP over 16: (256 + 1 experts + the router) / 16
  const double ep_layer = 17 * kExpert + kRouter;
  const double tp_layer = (257 * kExpert + kRouter) / 16;
  CHECK(s.memory.weights - split.memory.weights ==
        doctest::Approx(58 * (ep_layer - tp_layer)).epsilon(1e-6).scale(1e-12));
  // low-latency buffers: 2 x 16 experts x 16 ranks x 32 tokens x (7,408 B dispatch message, header included, +
  // 14,336 B combine) = 356.2 MB
  CHECK(s.memory.buffers - split.memory.buffers ==
        doctest::Approx(2 * 16 * 16 * 32 * (7408.0 + 14336.0)).epsilon(1e-9).scale(1e-12));
}

TEST_CASE("two micro-batches: each half's compute against its exchanges, 2 x the larger") {
  const model::StepResult one = step_of(dp_attention_ep16(1), 16 * 64);
  const model::StepResult two = step_of(dp_attention_ep16(2), 16 * 64);
  REQUIRE(two.experts);
  const model::ExpertStep& e = *two.experts;
  CHECK(e.micro_batches == 2);
  CHECK(e.dispatch.routing.tokens_per_gpu == 32);  // a half of 64
  CHECK(two.layer_s == doctest::Approx(2 * std::max(e.compute_s, e.exchange_s)).scale(1e-12));
  CHECK(two.breakdown.overlapped_s == doctest::Approx(2 * std::min(e.compute_s, e.exchange_s)).scale(1e-12));
  // each half streams the weights again: the experts' time nearly doubles
  CHECK(two.experts->experts_mlp_s > 1.8 * one.experts->experts_mlp_s);
}

TEST_CASE("TP 8 attention x 2 replicas, EP 16: the group's hidden states reduce-scattered and all-gathered") {
  model::Layout layout{8, 1, 2};
  layout.experts.ep = 16;
  const model::StepResult s = step_of(layout, 64);  // 64 sequences a replica
  REQUIRE(s.experts);
  CHECK(s.experts->tokens_per_gpu == 8);  // 64 / 8 a GPU
  // reduce-scatter and all-gather of 64 x 7,168 x 2 B over the TP group (each replica's at once, no link shared)
  const model::CommGroup tp = model::describe_group(two_dgx(), {0, 1, 2, 3, 4, 5, 6, 7});
  model::CollectiveRequest request;
  request.bytes = 64 * 7168 * 2.0;
  request.op = model::CollectiveOp::reduce_scatter;
  const double scatter_s = model::estimate_collective(tp, request).chosen.time_s;
  request.op = model::CollectiveOp::allgather;
  const double gather_s = model::estimate_collective(tp, request).chosen.time_s;
  CHECK(s.breakdown.tp_communication_s == doctest::Approx(scatter_s + gather_s).epsilon(1e-9).scale(1e-12));
}

TEST_CASE("a step with EP: 58 MoE layers with the exchanges, 3 dense layers without") {
  const model::StepResult layer = step_of(dp_attention_ep16(), 16 * 32, Scope::layer);
  const model::StepResult step = step_of(dp_attention_ep16(), 16 * 32, Scope::step);
  CHECK(step.breakdown.ep_communication_s == doctest::Approx(58 * layer.breakdown.ep_communication_s).scale(1e-12));
  CHECK(step.dense_layers == 3);
  // + the LM head and the all-gather of the logits (512 x 129,280 x 2 B over the 16 GPUs: DP attention's LM head
  // runs as its MLP, split over the group)
  const model::CommGroup all = model::describe_group(two_dgx());
  model::CollectiveRequest request;
  request.op = model::CollectiveOp::allgather;
  request.bytes = 512 * 129280 * 2.0;
  const double logits_s = model::estimate_collective(all, request).chosen.time_s;
  CHECK(step.step_s ==
        doctest::Approx(58 * layer.layer_s + 3 * step.dense_layer_s + step.breakdown.lm_head_s + logits_s)
            .epsilon(1e-9)
            .scale(1e-12));
}

TEST_CASE("EP must span the layout's GPUs; micro-batches are 1 or 2") {
  model::Layout wrong{8, 1, 1};
  wrong.experts.ep = 16;
  CHECK_THROWS_WITH_AS(model::place_layout(two_dgx(), wrong), doctest::Contains("must be the layout's 8 GPUs"),
                       topologies::InputError);
  model::Layout three = dp_attention_ep16(3);
  CHECK_THROWS_AS(model::place_layout(two_dgx(), three), topologies::InputError);
}
