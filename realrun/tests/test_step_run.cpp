// The real step's host logic (step_run.hpp): shapes per TP rank, bytes held, the fit check and the collectives a
// loopback must match. Expected values by hand from the models' config.json figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "treering/model/workload.hpp"
#include "treering/realrun/step_run.hpp"
#include "step_test_workload.hpp"

using namespace treering;
using namespace treering::realrun;

TEST_CASE("a tp rank of llama3.1-8b holds its heads, its MLP width and its LM head rows") {
  const StepShape s = step_shape(model::find_workload("llama3.1-8b"), 8, 4095, 2);
  CHECK(s.query_heads == 16);     // 32 / 2
  CHECK(s.kv_heads == 4);         // 8 / 2
  CHECK(s.intermediate == 7168);  // 14,336 / 2
  CHECK(s.vocab == 64128);        // 128,256 / 2
  CHECK(s.full_vocab == 128256);
  CHECK(s.qkv_rows() == 3072);  // (16 + 2 x 4) x 128
  CHECK(s.attention_width() == 2048);
}

TEST_CASE("llama3.2-1b's weights are Meta's 1.24 B parameters in bf16, with the LM head tied") {
  // Per layer: QKV 3,072 x 2,048 = 6,291,456; O 2,048 x 2,048 = 4,194,304; gate/up 16,384 x 2,048 = 33,554,432;
  // down 2,048 x 8,192 = 16,777,216; norms 4,096: 60,821,504. x 16 = 973,144,064; + LM head 128,256 x 2,048 =
  // 262,668,288; + final norm 2,048: 1,235,814,400 parameters x 2 B.
  const StepBytes b = step_bytes(step_shape(model::find_workload("llama3.2-1b"), 1, 0, 1));
  CHECK(b.weights == 2471628800.0);
}

TEST_CASE("the KV cache holds the context and the new token, every layer's K and V") {
  // llama3.1-8b, 4,095 cached + 1: 32 layers x 2 x 4,096 tokens x 8 heads x 128 x 2 B = 536,870,912 B.
  const StepBytes b = step_bytes(step_shape(model::find_workload("llama3.1-8b"), 1, 4095, 1));
  CHECK(b.kv_cache == 536870912.0);
  // At batch 4 and tp 4: 4 x the sequences, 1/4 of the heads: the same per rank.
  CHECK(step_bytes(step_shape(model::find_workload("llama3.1-8b"), 4, 4095, 4)).kv_cache == 536870912.0);
}

TEST_CASE("a step that does not fit is refused with both figures") {
  const StepShape s = step_shape(model::find_workload("llama3.1-8b"), 32, 131072, 1);
  // 32 x 131,073 tokens x 128 KiB = 549.8 GB of cache alone.
  try {
    check_fits(s, 1, 80e9);
    FAIL("expected a refusal");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("549.76 GB") != std::string::npos);  // 32 x 131,073 x 131,072 B = 549,759,483,904 B of cache
    CHECK(what.find("80.00 GB are free") != std::string::npos);
  }
  CHECK_NOTHROW(check_fits(step_shape(model::find_workload("llama3.2-1b"), 1, 4096, 1), 1, 80e9));
}

TEST_CASE("workloads the real step cannot run are refused") {
  CHECK_THROWS_AS(step_shape(model::find_workload("paper-mha16"), 1, 1000, 1), std::invalid_argument);        // no MLP
  CHECK_THROWS_AS(step_shape(model::find_workload("mixtral-8x7b"), 1, 1000, 1), std::invalid_argument);       // experts
  CHECK_THROWS_AS(step_shape(model::find_workload("llama3.1-405b-fp8"), 1, 1000, 8), std::invalid_argument);  // fp8
  CHECK_THROWS_AS(step_shape(model::find_workload("llama3.1-8b"), 1, 1000, 3), std::invalid_argument);  // 32 heads
  CHECK_THROWS_AS(step_shape(model::find_workload("llama3.1-8b"), 0, 1000, 1), std::invalid_argument);
}

TEST_CASE("a loopback's collectives are the model's: two all-reduces a layer and the logits' all-gather") {
  const model::Workload& w = model::find_workload("llama3.1-8b");
  // batch 8: hidden 8 x 4,096 x 2 B = 65,536 B, 2 x 32 layers; logits 8 x 128,256 x 2 B = 2,052,096 B.
  const StepCollectiveCount c = expected_collectives(w, step_shape(w, 8, 4096, 2));
  CHECK(c.allreduces == 64);
  CHECK(c.allreduce_bytes == 65536.0);
  CHECK(c.allgathers == 1);
  CHECK(c.allgather_bytes == 2052096.0);
  CHECK(expected_collectives(w, step_shape(w, 8, 4096, 1)).allreduces == 0);  // tp 1: none
}

TEST_CASE("without a GPU the step refuses, it does not pretend") {
#if !TREERING_HAVE_CUDA
  const StepShape s = step_shape(model::find_workload("llama3.2-1b"), 1, 16, 1);
  CHECK_THROWS_AS(cuda::measure_step(s, 1, 1, 7), std::runtime_error);
#endif
  CHECK(std::string(to_string(StepPart::tp_communication)) == "tp_communication");
}

TEST_CASE("the host reference step is deterministic, finite, and its argmax is its logits' largest") {
  const model::Workload w = testing::tiny_llama();
  for (int tp : {1, 2}) {
    const StepShape s = step_shape(w, 2, 5, tp);
    const StepOutputs a = reference_step(s, 3), b = reference_step(s, 3);
    CHECK(a.hidden == b.hidden);
    REQUIRE(a.logits.size() == 2u * 1000u);
    REQUIRE(a.next_tokens.size() == 2u);
    for (int row = 0; row < 2; ++row) {
      const float* logits = a.logits.data() + row * 1000;
      CHECK(std::all_of(logits, logits + 1000, [](float v) { return std::isfinite(v); }));
      CHECK(logits[a.next_tokens[static_cast<std::size_t>(row)]] == *std::max_element(logits, logits + 1000));
    }
    CHECK(testing::normwise_error(a.hidden, reference_step(s, 4).hidden) > 0.1);  // another seed, other weights
  }
}
