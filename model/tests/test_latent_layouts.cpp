// Latent attention (DeepSeek-V3) under TP, decode context parallelism and data-parallel attention on one DGX H200,
// derived by hand: H200 SXM 4.8 TB/s and 989 TFLOP/s (bf16, dense), and FlashMLA's published efficiencies
// (3000 GB/s of an H800's 3.35 TB/s; 660 of its 990 TFLOP/s).
#include <doctest/doctest.h>

#include "treering/model/compute.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::AttentionParallelism;
using model::DecodeAlgorithm;
using model::Layout;

namespace {

const topologies::Topology& one_h200() {
  static const topologies::Topology topology = topologies::build_topology("dgx-h200", {1, {}});
  return topology;
}

model::Workload deepseek(int batch) {
  model::Workload w = model::find_workload("deepseek-v3");
  w.batch = batch;
  return w;
}

model::StepResult step_of(const Layout& layout, DecodeAlgorithm algorithm, const model::Workload& w, long long seq_len,
                          model::Scope scope = model::Scope::step) {
  const model::LayoutModel layouts(one_h200(), model::place_layout(one_h200(), layout));
  const model::LayoutAttention attention = layouts.attention(algorithm, w, seq_len);
  return model::evaluate_step(layouts, attention, algorithm, w, seq_len, scope);
}

constexpr double kMlaHbm_Bps = 4.8e12 * 3000.0 / 3350.0;  // 4.2985e12
constexpr double kMlaFlops = 989e12 * 660.0 / 990.0;      // 659.3e12

}  // namespace

TEST_CASE("absorbed latent attention: sizes, FLOPs, memory-bound at 16 heads a GPU, compute-bound at 128") {
  const model::ComputeRates rates = model::compute_rates(one_h200(), 0);
  REQUIRE(rates.hbm_rated_Bps == 4.8e12);
  REQUIRE(rates.peak_flops == 989e12);
  const model::Workload tp8 = model::head_slice(deepseek(1), 8);
  const model::PlanSizes sizes = model::plan_sizes(tp8, 4);
  CHECK(sizes.q_bytes == 18432.0);            // 16 heads x 576 x 2 B
  CHECK(sizes.o_bytes == 16384.0);            // 16 x 512 x 2 B
  CHECK(sizes.kv_bytes_per_token == 1152.0);  // one latent of 576 x 2 B: keys and values
  // 128,000 tokens: 147,456,000 + 18,432 + 16,384 + 64 (lse) B at 4.2985e12 B/s = 34.31 us; 2 x 16 x 128,000 x 1088 =
  // 4.456 GFLOP at 659.3e12 = 6.76 us: memory-bound
  CHECK(model::attention_flops(tp8, 128000) == 4456448000.0);
  CHECK(model::attention_time_s(rates, tp8, sizes, 128000) ==
        doctest::Approx(rates.launch_s + 147490880.0 / kMlaHbm_Bps).scale(1e-12));
  // dcp 8: all 128 heads over 16,000 tokens: 18,711,040 B -> 4.35 us, the same 4.456 GFLOP -> 6.76 us: compute-bound
  const model::Workload all_heads = deepseek(1);
  const model::PlanSizes all = model::plan_sizes(all_heads, 4);
  CHECK(model::attention_time_s(rates, all_heads, all, 16000) ==
        doctest::Approx(rates.launch_s + 4456448000.0 / kMlaFlops).scale(1e-12));
}

TEST_CASE("tp 8 holds eight copies of the latent, tp 8 with dcp 8 one") {
  const long long seq_len = 128000;
  const double latent_bytes = seq_len * 70272.0;  // 576 x 2 B x 61 layers a token
  const model::StepResult tp = step_of({8, 1}, DecodeAlgorithm::a2a, deepseek(1), seq_len);
  CHECK(8 * tp.memory.kv_cache == doctest::Approx(8 * latent_bytes).scale(1e-9));
  const model::StepResult dcp =
      step_of({1, 8, 1, AttentionParallelism::decode_context}, DecodeAlgorithm::a2a, deepseek(1), seq_len);
  CHECK(8 * dcp.memory.kv_cache == doctest::Approx(latent_bytes).scale(1e-9));
  CHECK(dcp.post_attention_gpus == 8);
  // the longest context: 8 x more room per token with the latent split 8 ways (the rest of memory alike but for the
  // combine's buffers and the query gather, a few MB)
  CHECK(dcp.memory.max_seq_len > 7 * tp.memory.max_seq_len);
  // sequences of 128,000 tokens that fit: the room beside everything else over 8.99 GB a sequence (TP) or an eighth
  for (const model::StepResult* r : {&tp, &dcp}) {
    const model::StepMemory& m = r->memory;
    const double room = m.capacity - (m.total - m.kv_cache);  // a2a keeps no receive buffers beside the cache
    const double per_sequence = r == &tp ? latent_bytes : latent_bytes / 8;
    CHECK(m.max_batch == static_cast<long long>(room / per_sequence));
  }
}

TEST_CASE("decode context parallelism gathers the queries first; pass-q is refused") {
  const model::LayoutModel layouts(one_h200(),
                                   model::place_layout(one_h200(), {1, 8, 1, AttentionParallelism::decode_context}));
  const model::DecodePlan plan = layouts.plan(0, DecodeAlgorithm::ag_rs, deepseek(2), 64000);
  REQUIRE(!plan.phases.empty());
  CHECK(plan.phases.front().role == model::PhaseRole::query_gather);
  CHECK(plan.phases.front().op == model::CollectiveOp::allgather);
  CHECK(plan.phases.front().bytes == 294912.0);  // 2 sequences x 128 heads x 576 x 2 B
  CHECK(plan.phases[1].role == model::PhaseRole::attention);
  CHECK_THROWS_AS(layouts.plan(0, DecodeAlgorithm::pass_q, deepseek(2), 64000), topologies::InputError);
  CHECK(model::layout_name(layouts.groups().layout) == "tp 8 (dcp 8)");
}

TEST_CASE("the attention's weights per GPU: split 8 ways under TP and DCP, whole with data-parallel attention") {
  // fp8: 1 B a parameter. tp 8: 15,140,864 (q_a, kv_a, norms: whole) + (37,748,736 + 16,777,216) / 8 +
  // 117,440,512 / 8 = 36,636,672 B a layer; data-parallel attention: all 187,107,328.
  CHECK(step_of({8, 1}, DecodeAlgorithm::a2a, deepseek(8), 4000, model::Scope::layer).part_bytes.projections ==
        36636672.0);
  CHECK(step_of({1, 8, 1, AttentionParallelism::decode_context}, DecodeAlgorithm::tree, deepseek(8), 4000,
                model::Scope::layer)
            .part_bytes.projections == 36636672.0);
  const model::StepResult data =
      step_of({8, 1, 1, AttentionParallelism::data}, DecodeAlgorithm::a2a, deepseek(64), 4000, model::Scope::layer);
  CHECK(data.part_bytes.projections == 187107328.0);
  CHECK(data.tokens_per_gpu == 8);  // 64 sequences over 8 GPUs
  CHECK(data.collectives.attention_output_op == model::CollectiveOp::allgather);
  CHECK(data.collectives.mlp_output_op == model::CollectiveOp::reduce_scatter);
  CHECK(data.collectives.hidden_allreduce_bytes == 917504.0);  // the whole batch: 64 x 7168 x 2 B
  CHECK(model::layout_name({8, 1, 1, AttentionParallelism::data}) == "tp 8, dp attention");
  CHECK_THROWS_AS(model::place_layout(one_h200(), {4, 2, 1, AttentionParallelism::data}), topologies::InputError);
}

TEST_CASE("a step runs the dense first layers' MLP and the MoE layers' experts") {
  const model::Workload w = deepseek(4);
  const model::StepResult layer = step_of({8, 1}, DecodeAlgorithm::a2a, w, 4000, model::Scope::layer);
  const model::StepResult step = step_of({8, 1}, DecodeAlgorithm::a2a, w, 4000);
  CHECK(step.dense_layers == 3);
  // 58 MoE layers at the layer's MLP time, 3 dense ones at the dense MLP's
  CHECK(step.breakdown.mlp_s == doctest::Approx(58 * layer.breakdown.mlp_s + 3 * layer.dense_mlp_s).scale(1e-12));
  CHECK(layer.dense_mlp_s > 0);
  CHECK(layer.dense_mlp_s != layer.breakdown.mlp_s);
}

TEST_CASE("an MLA kernel calibrated by shape (head dim 576, 16 heads a latent) replaces FlashMLA's figures") {
  model::ComputeRates rates = model::compute_rates(one_h200(), 0);
  rates.multiprocessors = 132;
  rates.attention_shapes.push_back({576, 16, 5e-6, 0.0, 2.0e12});  // a kernel measured at 2 TB/s, 5 us fixed
  const model::Workload tp8 = model::head_slice(deepseek(1), 8);
  const model::PlanSizes sizes = model::plan_sizes(tp8, 4);
  // 128,000 tokens: 147,490,880 B (above) / 2e12 + 5 us = 78.75 us
  CHECK(model::attention_time_s(rates, tp8, sizes, 128000) == doctest::Approx(5e-6 + 147490880.0 / 2e12).scale(1e-12));
}
