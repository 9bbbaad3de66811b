// The whole decode step around a layout's attention, derived by hand on one DGX H100 (rates from its preset:
// HBM 3.35 TB/s x 0.80 = 2.68e12 B/s effective, 989 TFLOP/s, 3 us launch, 80 GB).
#include <doctest/doctest.h>

#include <memory>

#include "treering/model/collectives.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;
using model::Scope;

namespace {

const topologies::Topology& one_dgx() {
  static const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  return topology;
}

constexpr double kHbm_Bps = 3.35e12 * 0.80;
constexpr double kLaunch_s = 3e-6;

double collective_s(const model::CommGroup& group, double bytes,
                    model::CollectiveOp op = model::CollectiveOp::allreduce) {
  model::CollectiveRequest request;
  request.op = op;
  request.bytes = bytes;
  return model::estimate_collective(group, request).chosen.time_s;
}

struct Evaluated {
  model::LayoutAttention attention;
  model::StepResult step;
};

Evaluated evaluate(const model::LayoutModel& layouts, DecodeAlgorithm algorithm, const model::Workload& w,
                   long long seq_len, Scope scope) {
  Evaluated e;
  e.attention = layouts.attention(algorithm, w, seq_len);
  e.step = model::evaluate_step(layouts, e.attention, algorithm, w, seq_len, scope);
  return e;
}

}  // namespace

TEST_CASE("llama3.1-8b, tp 4 x cp 2, tree: one layer's parts by hand") {
  const model::Workload& w = model::find_workload("llama3.1-8b");
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{4, 2}));
  const Evaluated e = evaluate(layouts, DecodeAlgorithm::tree, w, 65536, Scope::layer);
  const model::StepBreakdown& b = e.step.breakdown;
  CHECK(e.step.post_attention_gpus == 4);  // tree leaves the output on every CP rank: the TP group runs the rest
  CHECK(e.step.tokens_per_gpu == 1);
  // QKV + O on one GPU: Q 4096^2 / 4 + (K + V) 2 x 4096 x 1024 x 2/8 (2 of 8 KV heads) + O 4096^2 / 4
  //   = 4,194,304 + 2,097,152 + 4,194,304 = 10,485,760 parameters x 2 B, plus 2 launches.
  CHECK(b.projections_s == doctest::Approx(2 * kLaunch_s + 10485760.0 * 2 / kHbm_Bps).scale(1e-12));
  // MLP: 3 x 4096 x 14336 / 4 = 44,040,192 parameters x 2 B, 3 launches.
  CHECK(b.mlp_s == doctest::Approx(3 * kLaunch_s + 44040192.0 * 2 / kHbm_Bps).scale(1e-12));
  // Norms 2 x 4096 x 2 B and the KV append of 1 token x 2 KV heads x 128 x 2 (K, V) x 2 B, 4 launches.
  CHECK(b.other_s == doctest::Approx(4 * kLaunch_s + (16384.0 + 1024.0) / kHbm_Bps).scale(1e-12));
  const model::CommGroup tp_group = model::describe_group(one_dgx(), {0, 1, 2, 3});
  CHECK(b.tp_communication_s == doctest::Approx(2 * collective_s(tp_group, 4096.0 * 2)).scale(1e-12));
  CHECK(b.attention_s ==
        doctest::Approx(e.attention.slowest.latency_s - e.attention.slowest.first_call_s).scale(1e-12));
  CHECK(e.step.layer_s ==
        doctest::Approx(b.attention_s + b.projections_s + b.mlp_s + b.other_s + b.tp_communication_s).scale(1e-12));
  CHECK(e.step.step_s == e.step.layer_s);
}

TEST_CASE("llama3.1-8b step: 32 layers, the LM head and the logits' all-gather; weights per GPU by hand") {
  const model::Workload& w = model::find_workload("llama3.1-8b");
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{4, 2}));
  const Evaluated layer = evaluate(layouts, DecodeAlgorithm::tree, w, 65536, Scope::layer);
  const Evaluated step = evaluate(layouts, DecodeAlgorithm::tree, w, 65536, Scope::step);
  const model::CommGroup tp_group = model::describe_group(one_dgx(), {0, 1, 2, 3});
  // LM head: 128,256 x 4096 / 4 = 131,334,144 parameters x 2 B, one launch; logits 128,256 x 2 B gathered.
  const double lm_head_s = kLaunch_s + 131334144.0 * 2 / kHbm_Bps;
  CHECK(step.step.breakdown.lm_head_s == doctest::Approx(lm_head_s).scale(1e-12));
  const double gather_s = collective_s(tp_group, 128256.0 * 2, model::CollectiveOp::allgather);
  CHECK(step.step.step_s ==
        doctest::Approx(32 * layer.step.layer_s + lm_head_s + gather_s + step.attention.slowest.first_call_s)
            .scale(1e-12));
  CHECK(step.step.tokens_per_s == doctest::Approx(1 / step.step.step_s).scale(1e-12));
  // 32 x (10,485,760 + 44,040,192 + 8,192) x 2 B + (embedding + LM head) 2 x 525,336,576 / 4 x 2 B
  CHECK(step.step.memory.weights == doctest::Approx(32 * 54534144.0 * 2 + 2 * 525336576.0 / 4 * 2).scale(1e-12));
  CHECK(step.step.memory.capacity == 80e9);
}

TEST_CASE("a2a runs the rest over all tp x cp GPUs; pass-q's ranks take their own sequences") {
  model::Workload w = model::find_workload("llama3.1-8b");
  w.batch = 4;
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{4, 2}));
  const Evaluated a2a = evaluate(layouts, DecodeAlgorithm::a2a, w, 65536, Scope::layer);
  CHECK(a2a.step.post_attention_gpus == 8);
  CHECK(a2a.step.tokens_per_gpu == 4);
  // MLP over 8 GPUs: 3 x 4096 x 14336 / 8 parameters, FLOPs 2 x 4 tokens x that (memory-bound still).
  CHECK(a2a.step.breakdown.mlp_s == doctest::Approx(3 * kLaunch_s + 22020096.0 * 2 / kHbm_Bps).scale(1e-12));
  const Evaluated pass_q = evaluate(layouts, DecodeAlgorithm::pass_q, w, 65536, Scope::layer);
  CHECK(pass_q.step.post_attention_gpus == 4);
  CHECK(pass_q.step.tokens_per_gpu == 2);  // 4 sequences over 2 CP ranks
}

TEST_CASE("mixtral: the experts one token routes to are read, all of them are held") {
  const model::Workload& w = model::find_workload("mixtral-8x7b");
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{8, 1}));
  const Evaluated e = evaluate(layouts, DecodeAlgorithm::a2a, w, 32768, Scope::step);
  // Per layer: 2 experts x 3 x 4096 x 14336 + router 4096 x 8, over 8 GPUs, x 2 B; 4 launches (with the router).
  const double expert = 3.0 * 4096 * 14336;
  CHECK(e.step.breakdown.mlp_s ==
        doctest::Approx(32 * (4 * kLaunch_s + (2 * expert + 32768) / 8 * 2 / kHbm_Bps)).scale(1e-12));
  // Held: all 8 experts. Attention 2 x 4096^2 + 2 x 4096 x 1024 per layer: with tp 8 one KV head of 8 per GPU.
  const double per_layer_held = (4096.0 * 4096 / 8 * 2 + 2 * 4096.0 * 1024 / 8) + (8 * expert + 32768) / 8 + 8192;
  CHECK(e.step.memory.weights == doctest::Approx(32 * per_layer_held * 2 + 2 * 32000.0 * 4096 / 8 * 2).scale(1e-12));
}

TEST_CASE("fp8 feed-forward weights halve the MLP's bytes, not the attention's") {
  const model::Workload& bf16 = model::find_workload("llama3.1-405b");
  const model::Workload& fp8 = model::find_workload("llama3.1-405b-fp8");
  const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  const model::LayoutModel layouts(two, model::place_layout(two, model::Layout{8, 2}));
  const Evaluated a = evaluate(layouts, DecodeAlgorithm::tree, bf16, 131072, Scope::layer);
  const Evaluated b = evaluate(layouts, DecodeAlgorithm::tree, fp8, 131072, Scope::layer);
  CHECK(b.step.breakdown.projections_s == doctest::Approx(a.step.breakdown.projections_s).scale(1e-12));
  // 2,617,245,696 / 8 parameters: 2 B -> 1 B
  CHECK(a.step.breakdown.mlp_s - b.step.breakdown.mlp_s == doctest::Approx(2617245696.0 / 8 / kHbm_Bps).scale(1e-12));
}

TEST_CASE("max_seq_len: the longest context whose KV cache fits beside the weights") {
  const model::Workload& w = model::find_workload("llama3.1-70b");
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{4, 2}));
  const long long longest = evaluate(layouts, DecodeAlgorithm::tree, w, 65536, Scope::step).step.memory.max_seq_len;
  REQUIRE(longest > 65536);
  const model::StepMemory at = evaluate(layouts, DecodeAlgorithm::tree, w, longest, Scope::step).step.memory;
  CHECK(at.total <= at.capacity);
  const model::StepMemory beyond =
      evaluate(layouts, DecodeAlgorithm::tree, w, longest + longest / 50, Scope::step).step.memory;
  CHECK(beyond.total > beyond.capacity);
  CHECK_THROWS_AS(model::evaluate_step(layouts, layouts.attention(DecodeAlgorithm::tree, w, 4096),
                                       DecodeAlgorithm::tree, w, 4096, Scope::attention),
                  std::logic_error);
}

TEST_CASE("a serving engine's host work is added once a step, never to a layer") {
  // llama3.1-8b at batch 16 on one H100 with an engine of 0.8 ms + 12 us a sequence: 0.8 + 16 x 0.012 = 0.992 ms
  // more a step than without it; the layer scope has no step to add it to.
  model::Workload w = model::find_workload("llama3.1-8b");
  w.batch = 16;
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{1, 1}));
  topologies::ImplProfile engine = topologies::default_impl_profile();
  engine.engine_step = topologies::EngineStep{0.8e-3, 12e-6, 0.0, "test", std::nullopt, 0.0, 0.0};
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(engine);
  const model::LayoutAttention with = layouts.attention(DecodeAlgorithm::tree, w, 8192, options);
  const model::StepResult step = model::evaluate_step(layouts, with, DecodeAlgorithm::tree, w, 8192, Scope::step);
  const model::StepResult layer = model::evaluate_step(layouts, with, DecodeAlgorithm::tree, w, 8192, Scope::layer);
  const Evaluated bare = evaluate(layouts, DecodeAlgorithm::tree, w, 8192, Scope::step);
  CHECK(step.breakdown.engine_s == doctest::Approx(0.992e-3).scale(1e-12));
  CHECK(step.step_s - bare.step.step_s == doctest::Approx(0.992e-3).scale(1e-12));
  CHECK(layer.breakdown.engine_s == 0);
  CHECK(layer.step_s == doctest::Approx(bare.step.layer_s).scale(1e-12));
}

TEST_CASE("an engine whose GEMMs lose efficiency adds the step's GEMM FLOPs at that share of the peak") {
  // llama3.1-8b's GEMM parameters: 32 layers x (q 4,096^2 + k, v 4,096 x 1,024 each + o 4,096^2 + MLP 3 x 4,096 x
  // 14,336 + norms 2 x 4,096) + LM head 128,256 x 4,096 + final norm 4,096 = 6,979.6e6 + 525.3e6 = 7,504.9e6. At
  // batch 16 on one H100 (989 TFLOP/s): 2 x 16 x 7.5049e9 / 989e12 = 0.2428 ms at peak; at 10 % of it 2.428 ms.
  model::Workload w = model::find_workload("llama3.1-8b");
  w.batch = 16;
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{1, 1}));
  topologies::ImplProfile engine = topologies::default_impl_profile();
  engine.engine_step = topologies::EngineStep{0.0, 0.0, 0.1, "test", std::nullopt, 0.0, 0.0};
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(engine);
  const model::LayoutAttention with = layouts.attention(DecodeAlgorithm::tree, w, 8192, options);
  const model::StepResult step = model::evaluate_step(layouts, with, DecodeAlgorithm::tree, w, 8192, Scope::step);
  CHECK(step.gemm_flops_at_peak_s == doctest::Approx(2.0 * 16 * 7.5049e9 / 989e12).scale(1e-12).epsilon(1e-4));
  CHECK(step.breakdown.engine_s == doctest::Approx(2.428e-3).scale(1e-12).epsilon(1e-3));
  const Evaluated bare = evaluate(layouts, DecodeAlgorithm::tree, w, 8192, Scope::step);
  CHECK(step.step_s - bare.step.step_s == doctest::Approx(step.breakdown.engine_s).scale(1e-12));
}

namespace {

// llama3.1-8b's step (batch 16, 8,192 tokens) on `tp` GPUs of one DGX with an engine doing only `engine_step`.
model::StepResult step_with_engine(const topologies::EngineStep& engine_step, int tp) {
  model::Workload w = model::find_workload("llama3.1-8b");
  w.batch = 16;
  topologies::ImplProfile engine = topologies::default_impl_profile();
  engine.engine_step = engine_step;
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(engine);
  const model::LayoutModel layouts(one_dgx(), model::place_layout(one_dgx(), model::Layout{tp, 1}));
  const model::LayoutAttention with = layouts.attention(DecodeAlgorithm::tree, w, 8192, options);
  return model::evaluate_step(layouts, with, DecodeAlgorithm::tree, w, 8192, Scope::step);
}

}  // namespace

TEST_CASE("an engine's extra per TP collective is added for each of the step's collectives, none on one GPU") {
  // llama3.1-8b at TP 8: 2 x 32 all-reduces and the logits' all-gather = 65 collectives; 60 us more each: 3.9 ms.
  topologies::EngineStep engine_step;
  engine_step.per_collective_s = 60e-6;
  for (const int tp : {8, 1}) {
    const model::StepResult step = step_with_engine(engine_step, tp);
    CHECK(step.tp_collectives == (tp == 8 ? 65 : 0));
    CHECK(step.breakdown.engine_s == doctest::Approx(tp == 8 ? 3.9e-3 : 0.0).scale(1e-12));
  }
}

TEST_CASE("an engine's extra per layer is added for each of the step's layers, at any TP") {
  // llama3.1-8b: 32 layers, 130 us more each: 4.16 ms a step on one GPU and at TP 8 alike.
  topologies::EngineStep engine_step;
  engine_step.per_layer_s = 130e-6;
  for (const int tp : {8, 1})
    CHECK(step_with_engine(engine_step, tp).breakdown.engine_s == doctest::Approx(4.16e-3).scale(1e-12));
}
