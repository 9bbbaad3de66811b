// The prefill inside a timed generation as an implementation profile runs it: the Tree Attention paper's causal
// ring, where the last rank attends to every block and the others wait for it (ring-causal-skip).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

#include "treering/model/decode.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

model::PlanOptions with_prefill(double efficiency, bool kv_expansion) {
  auto profile = std::make_shared<topologies::ImplProfile>(topologies::load_impl_profile("efficient"));
  profile->prefill = topologies::PrefillProfile{"ring-causal-skip", efficiency, "test"};
  profile->kv_expansion = kv_expansion;
  model::PlanOptions options;
  options.impl = profile;
  return options;
}

}  // namespace

TEST_CASE("ring-causal-skip: the last rank's diagonal and p - 1 full blocks a layer, compute-bound on NVLink") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  // 64,000 tokens on 8 H100: blocks of 8,000. A full block: 4 x 8000^2 x 32 x 128 = 1.0486e12 FLOP at
  // 0.374 x 989e12 = 369.9e12 FLOP/s: 2.835 ms; the diagonal half that. The expanded block (8,000 x 2 x 32 x 128 x
  // 2 B = 131 MB) crosses NVLink in about 1-2 ms, under 2.835 ms: hidden. A layer: 1.417 + 7 x 2.835 = 21.26 ms.
  // Weights: 2 x 8.03e9 x 8,000 at half the peak = 0.260 s; 32 layers 0.680 s: 0.940 s.
  const double full_s = 4.0 * 8000.0 * 8000.0 * 4096.0 / (0.374 * 989e12);
  CHECK(full_s == doctest::Approx(2.835e-3).scale(1e-12).epsilon(1e-3));
  CHECK(model.p2p(0, 1).time_s(8000.0 * 2 * 32 * 128 * 2) < full_s);
  const double weights_s = 2.0 * llama.parameters * 8000.0 / (989e12 * 0.5);
  const double expected_s = weights_s + 32 * (full_s / 2 + 7 * full_s);
  CHECK(expected_s == doctest::Approx(0.940).scale(1e-12).epsilon(0.01));  // the header's worked example
  CHECK(model.prefill_s(llama, 64000, with_prefill(0.374, true)) == doctest::Approx(expected_s).scale(1e-12));
  // The balanced estimate spreads the same causal attention evenly at half the peak: the schedule costs more.
  CHECK(model.prefill_s(llama, 64000) < model.prefill_s(llama, 64000, with_prefill(0.5, true)));
}

TEST_CASE("ring-causal-skip: short blocks wait for their K/V, expanded or not") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  // 8,000 tokens on 8 GPUs: blocks of 1,000 tokens, 4 x 1000^2 x 4096 = 1.64e10 FLOP (44 us at 370 TFLOP/s), while
  // the expanded block is 1,000 x 2 x 32 x 128 x 2 B = 16.4 MB: NVLink takes longer, so steps 0 .. 6 last the send
  // and step 7 the attention.
  const double full_s = 4.0 * 1000.0 * 1000.0 * 4096.0 / (0.374 * 989e12);
  const double weights_s = 2.0 * llama.parameters * 1000.0 / (989e12 * 0.5);
  for (const bool expanded : {true, false}) {
    CAPTURE(expanded);
    const double block_bytes = 1000.0 * 2 * (expanded ? 32 : 8) * 128 * 2;
    double send_s = 0;
    for (int rank = 0; rank < 8; ++rank) send_s = std::max(send_s, model.p2p(rank, (rank + 1) % 8).time_s(block_bytes));
    REQUIRE(send_s > full_s);
    CHECK(model.prefill_s(llama, 8000, with_prefill(0.374, expanded)) ==
          doctest::Approx(weights_s + 32 * (7 * send_s + full_s)).scale(1e-12));
  }
}

TEST_CASE("ring-causal-skip on one GPU: the causal prompt alone, no ring") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {1}});
  const model::DecodeModel model(topology);
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  // One block of 4,000 tokens, causal: 2 x 4000^2 x 4096 FLOP a layer at 0.374 of the peak.
  const double expected_s =
      2.0 * llama.parameters * 4000.0 / (989e12 * 0.5) + 32 * 2.0 * 4000.0 * 4000.0 * 4096.0 / (0.374 * 989e12);
  CHECK(model.prefill_s(llama, 4000, with_prefill(0.374, true)) == doctest::Approx(expected_s).scale(1e-12));
}
