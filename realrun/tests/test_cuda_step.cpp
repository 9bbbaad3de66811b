// The real decode step on the GPU (step_run.hpp) against the host reference step, which rounds to bf16 where the
// GPU stores: the differences left are accumulation order and the attention kernel's bf16 probabilities, so the
// hidden state and the logits agree to bf16 precision (normwise 2e-2; METHOD: bf16 operands land 1e-3 - 1e-2).
// At tp 1 and on 2 loopback ranks, with an empty cache (the new token alone) and longer ones; the timed
// measurement's collectives equal the model's. Skipped (gpu_main.cpp) without a usable device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "step_test_workload.hpp"
#include "treering/model/statistics.hpp"
#include "treering/realrun/step_run.hpp"

using namespace treering;
using namespace treering::realrun;

TEST_CASE("cuda step: a small Llama equals the host reference at tp 1 and on 2 loopback ranks") {
  const model::Workload w = testing::tiny_llama();
  for (int tp : {1, 2}) {
    for (long long seq_len : {0LL, 37LL, 700LL}) {
      CAPTURE(tp);
      CAPTURE(seq_len);
      const StepShape s = step_shape(w, 3, seq_len, tp);
      const StepOutputs reference = reference_step(s, 11);
      const StepOutputs gpu = cuda::run_step_once(s, 11);
      CHECK(testing::normwise_error(gpu.hidden, reference.hidden) < 2e-2);
      CHECK(testing::normwise_error(gpu.logits, reference.logits) < 2e-2);
      REQUIRE(gpu.next_tokens.size() == 3u);
      for (std::size_t b = 0; b < 3;
           ++b) {  // the GPU's pick is the reference's largest logit, or within rounding of it
        const float* row = reference.logits.data() + b * 1000;
        const float top = *std::max_element(row, row + 1000);
        CHECK(row[gpu.next_tokens[b]] >= top - 2e-2f * std::fabs(top));
      }
    }
  }
}

TEST_CASE("cuda step: a timed loopback step counts the model's collectives and its parts add up") {
  const model::Workload w = testing::tiny_llama();
  const StepShape s = step_shape(w, 4, 1000, 2);
  const StepMeasurement m = cuda::measure_step(s, 1, 3, 5);
  const StepCollectiveCount expected = expected_collectives(w, s);
  CHECK(m.collectives.allreduces == expected.allreduces);  // 2 x 2 layers
  CHECK(m.collectives.allreduce_bytes == expected.allreduce_bytes);
  CHECK(m.collectives.allgather_bytes == expected.allgather_bytes);
  REQUIRE(m.step_s.size() == 3u);
  CHECK(m.non_finite == 0);
  // Each sample's parts add up to its whole; medians of parts add up to about the median whole (within 10 %), and
  // with the marks' overhead taken off, to about the plain graph's step.
  double raw = 0, corrected = 0;
  for (std::size_t p = 0; p < kStepParts; ++p) raw += m.part_raw_s[p], corrected += m.part_s[p];
  CHECK(raw == doctest::Approx(m.parts_pass_s).epsilon(0.1).scale(1e-12));
  CHECK(corrected == doctest::Approx(model::median(m.step_s)).epsilon(0.1).scale(1e-12));
  // Per layer tp 2: other 3 (norm, RoPE, norm) x 2 layers ... every part has intervals; tp_communication 2 a layer + 1.
  CHECK(m.part_intervals[static_cast<std::size_t>(StepPart::tp_communication)] == 5);
  CHECK(m.part_s[static_cast<std::size_t>(StepPart::tp_communication)] > 0);
}
