// vLLM's PagedAttention decode kernels as an engine's attention (paged_attention.hpp): which kernel the op picks,
// the bytes every query head reads, and the step's attention in place of the model's. Expected values by hand.
#include <doctest/doctest.h>

#include <memory>

#include "treering/model/paged_attention.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// llama3.1-8b's head slice at TP 2: 16 query heads, 4 KV heads, head dim 128, 2-byte K/V.
model::Workload tp2_slice(int batch) {
  model::Workload slice = model::find_workload("llama3.1-8b");
  slice.query_heads = 16;
  slice.kv_heads = 4;
  slice.batch = batch;
  return slice;
}

}  // namespace

TEST_CASE("paged attention: v2 up to 512 (sequence, query head) blocks, v1 above, and v1 within one partition") {
  // 32 sequences x 16 heads = 512 blocks at 1,024 tokens (two partitions): v2; every query head reads its K/V head:
  // 32 x 16 x 1,024 x 2 x 128 x 2 B = 268,435,456 B.
  const model::PagedAttentionReads v2 = model::paged_attention_reads(tp2_slice(32), 1024);
  CHECK(v2.v1_bytes == 0);
  CHECK(v2.v2_bytes == doctest::Approx(268435456.0).scale(1e-12));
  // 33 x 16 = 528 > 512: v1, 33/32 of the bytes.
  const model::PagedAttentionReads v1 = model::paged_attention_reads(tp2_slice(33), 1024);
  CHECK(v1.v2_bytes == 0);
  CHECK(v1.v1_bytes == doctest::Approx(268435456.0 * 33 / 32).scale(1e-12));
  // One sequence at 512 tokens: one partition, v1 (nothing to reduce).
  CHECK(model::paged_attention_reads(tp2_slice(1), 512).v1_bytes > 0);
  CHECK(model::paged_attention_reads(tp2_slice(1), 513).v2_bytes > 0);
  // From a CUDA graph captured for 8,192 tokens the pick is made for them: 16 partitions, so one sequence of 16 heads
  // at 300 tokens runs v2 (eager: one partition, v1); a context past the capture runs eagerly, picked for itself.
  CHECK(model::paged_attention_reads(tp2_slice(1), 300).v1_bytes > 0);
  CHECK(model::paged_attention_reads(tp2_slice(1), 300, 8192).v2_bytes > 0);
  CHECK(model::paged_attention_reads(tp2_slice(33), 300, 8192).v1_bytes > 0);  // 528 blocks
  CHECK(model::paged_attention_reads(tp2_slice(64), 9000, 8192).v2_bytes > 0);
  // Past 8,192 tokens v1's logits would not fit in shared memory: v2 even with many blocks.
  CHECK(model::paged_attention_reads(tp2_slice(64), 8193).v2_bytes > 0);
  CHECK(model::paged_attention_reads(tp2_slice(64), 8192).v1_bytes > 0);
}

TEST_CASE("paged attention: each kernel at its efficiency of the rated bandwidth") {
  // 268,435,456 B by v2 at 1.2 x 5.3 TB/s = 42.2 us; the same by v1 at 0.3: 168.8 us.
  const topologies::PagedAttention kernels{0.3, 1.2};
  CHECK(model::paged_attention_s({0, 268435456.0}, kernels, 5.3e12) ==
        doctest::Approx(268435456.0 / 6.36e12).scale(1e-12));
  CHECK(model::paged_attention_s({268435456.0, 0}, kernels, 5.3e12) ==
        doctest::Approx(268435456.0 / 1.59e12).scale(1e-12));
}

TEST_CASE("paged attention: latent attention is refused") {
  model::Workload latent = model::find_workload("deepseek-v2-lite");
  CHECK_THROWS_AS(model::paged_attention_reads(latent, 1024), topologies::InputError);
}

TEST_CASE("paged attention: an engine with the kernels costs the step's attention as theirs") {
  // llama3.1-8b, 64 sequences at 3,072 tokens on one H100 (3.35 TB/s rated): 64 x 32 = 2,048 blocks -> v1;
  // 64 x 32 x 3,072 x 2 x 128 x 2 B = 3,221,225,472 B a layer at 0.5 x 3.35 TB/s = 1.923 ms; 32 layers: 61.5 ms.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  model::Workload w = model::find_workload("llama3.1-8b");
  w.batch = 64;
  const model::LayoutModel layouts(topology, model::place_layout(topology, model::Layout{1, 1}));
  topologies::ImplProfile engine = topologies::default_impl_profile();
  engine.engine_step = topologies::EngineStep{};
  engine.engine_step->paged_attention = topologies::PagedAttention{0.5, 1.0};
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(engine);
  const model::LayoutAttention with = layouts.attention(model::DecodeAlgorithm::tree, w, 3072, options);
  const model::StepResult step =
      model::evaluate_step(layouts, with, model::DecodeAlgorithm::tree, w, 3072, model::Scope::step);
  CHECK(step.paged_attention.v1_bytes == doctest::Approx(32 * 3221225472.0).scale(1e-12));
  CHECK(step.paged_attention.v2_bytes == 0);
  CHECK(step.breakdown.attention_s == doctest::Approx(32 * 3221225472.0 / (0.5 * 3.35e12)).scale(1e-12));
  // Without the kernels the model's own attention reads the K/V once per K/V head: a quarter of the bytes or so.
  const model::LayoutAttention bare = layouts.attention(model::DecodeAlgorithm::tree, w, 3072);
  const model::StepResult plain =
      model::evaluate_step(layouts, bare, model::DecodeAlgorithm::tree, w, 3072, model::Scope::step);
  CHECK(plain.breakdown.attention_s < step.breakdown.attention_s / 3);
  CHECK(plain.paged_attention.v1_bytes == step.paged_attention.v1_bytes);  // reported for a fit either way
  // Context parallelism: PagedAttention has none; refused, not costed as if every GPU read the whole context.
  const model::LayoutModel cp2(topology, model::place_layout(topology, model::Layout{1, 2}));
  const model::LayoutAttention split = cp2.attention(model::DecodeAlgorithm::tree, w, 3072, options);
  CHECK_THROWS_WITH_AS(model::evaluate_step(cp2, split, model::DecodeAlgorithm::tree, w, 3072, model::Scope::step),
                       doctest::Contains("no decode context parallelism (use --cp 1, got 2)"), topologies::InputError);
}

TEST_CASE("paged attention: v1's occupancy by the captured context, from the shared memory a multiprocessor has") {
  topologies::PagedAttention mi300x{0.3, 1.0};
  mi300x.v1_shared_memory_per_multiprocessor_bytes = 65536;  // 64 KiB of LDS a CU
  // Llama 2 (4,096 positions): 16 KiB of logits a block, 4 blocks a CU; at 8,192 tokens 32 KiB, 2: 2 / 4 = 0.5.
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama2-7b"), mi300x) == 0.5);
  // Llama 3 (8,192) and Qwen2 (131,072, captured at 8,192): the reference occupancy.
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama3-8b"), mi300x) == 1.0);
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("qwen2-7b"), mi300x) == 1.0);
  // A context length not known: taken as the capture's. No shared-memory figure: not modelled.
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama3.1-8b"), mi300x) == 1.0);
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama2-7b"), topologies::PagedAttention{0.3, 1.0}) ==
        1.0);
  // A capture of 2,048 tokens (8 KiB a block): 8 blocks a CU against 2: 0.25. An H100's 228 KiB: 7 blocks at 8,192
  // tokens, 14 at Llama 2's 4,096: 0.5.
  topologies::PagedAttention short_capture = mi300x;
  short_capture.max_seq_len_to_capture = 2048;
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama3-8b"), short_capture) == 0.25);
  topologies::PagedAttention h100 = mi300x;
  h100.v1_shared_memory_per_multiprocessor_bytes = 228.0 * 1024;
  CHECK(model::paged_v1_occupancy_scale(model::find_workload("llama2-7b"), h100) == 0.5);
  // The time: v1's bytes at the efficiency, scaled. 1 GB by v1 at 0.3 x 5.3 TB/s, half the time at Llama 2's capture.
  model::PagedAttentionReads reads{1e9, 0, 0.5};
  CHECK(model::paged_attention_s(reads, mi300x, 5.3e12) == doctest::Approx(0.5e9 / 1.59e12).scale(1e-12));
}
