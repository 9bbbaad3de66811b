// The MoE layer's pieces by hand, and the layer over 1, 2 and 4 ranks (threads) against its one-rank reference.
#include <doctest/doctest.h>

#include <cmath>

#include "treering/realrun/moe_run.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering;
using namespace treering::realrun;

namespace {

MoeShape small_shape() {  // 16 experts in 4 groups of 4, top 4 from the best 2 groups, one shared expert
  MoeShape shape;
  shape.hidden = 24;
  shape.intermediate = 12;
  shape.experts = 16;
  shape.top_k = 4;
  shape.groups = 4;
  shape.groups_per_token = 2;
  shape.shared_experts = 1;
  return shape;
}

}  // namespace

TEST_CASE("group-limited routing by hand: the best two groups by their two best scores, then the top 2") {
  MoeShape shape;
  shape.experts = 8;
  shape.top_k = 2;
  shape.groups = 4;
  shape.groups_per_token = 2;
  // groups {0,1} {2,3} {4,5} {6,7}: sums of their two best 1.0, 1.0, 1.5, 1.15 -> groups 2 and 3; among experts
  // 4-7 the best two are 7 (0.95) and 4 (0.8); expert 0 (0.9) is in a group left out. Weights 0.95 / 1.75, 0.8 / 1.75.
  const Routing routing = route(shape, {0.9f, 0.1f, 0.5f, 0.5f, 0.8f, 0.7f, 0.2f, 0.95f});
  REQUIRE(routing.experts.size() == 2);
  CHECK(routing.experts[0] == 7);
  CHECK(routing.experts[1] == 4);
  CHECK(routing.weights[0] == doctest::Approx(0.95 / 1.75).scale(1e-12));
  CHECK(routing.weights[1] == doctest::Approx(0.8 / 1.75).scale(1e-12));
  shape.groups = 0;  // plain top-2: 7 and 0
  const Routing plain = route(shape, {0.9f, 0.1f, 0.5f, 0.5f, 0.8f, 0.7f, 0.2f, 0.95f});
  CHECK(plain.experts == std::vector<int>{7, 0});
}

TEST_CASE("one expert by hand: down x (SiLU(gate x) * (up x))") {
  MoeShape shape;
  shape.hidden = 2;
  shape.intermediate = 1;
  // x = (1, 2); gate (1, 0) -> 1, SiLU(1) = 1 / (1 + e^-1) = 0.731059; up (0, 1) -> 2; inner 1.462117;
  // down (2, 1): (2.924234, 1.462117)
  const ExpertWeights weights{{1, 0}, {0, 1}, {2, 1}};
  const float x[] = {1, 2};
  const std::vector<float> y = expert_forward(shape, weights, x);
  CHECK(y[0] == doctest::Approx(2.924234).epsilon(1e-6).scale(1e-12));
  CHECK(y[1] == doctest::Approx(1.462117).epsilon(1e-6).scale(1e-12));
}

TEST_CASE("dispatch and combine over 1, 2 and 4 ranks equal the one-rank reference") {
  const MoeShape shape = small_shape();
  for (int ranks : {1, 2, 4}) {
    CAPTURE(ranks);
    std::vector<MoeRankResult> results(static_cast<std::size_t>(ranks));
    run_local_ranks(ranks, [&](Transport& transport) {
      results[static_cast<std::size_t>(transport.rank())] = run_moe_layer(transport, shape, 7, 2026);
    });
    double dispatched = 0, combined = 0;
    for (const MoeRankResult& r : results) {
      CHECK(r.max_relative_error == 0.0);  // the same sums in the same order as the reference
      CHECK(r.copies_sent == 7 * 4);
      CHECK(r.destination_ranks_per_token >= 1.0);
      CHECK(r.destination_ranks_per_token <= std::min(ranks, 4));
      dispatched += r.dispatch_bytes;
      combined += r.combine_bytes;
    }
    // every copy to another rank: 24 floats and a 4-byte expert id there, 24 floats back
    CHECK(dispatched == doctest::Approx(combined * (1 + 1.0 / 24)).scale(1e-12));
    if (ranks == 1) CHECK(dispatched == 0);
  }
}

TEST_CASE("the MoE run refuses what it cannot run") {
  model::Workload dense = model::find_workload("llama3.1-8b");
  CHECK_THROWS_AS(moe_shape(dense, std::nullopt, std::nullopt), topologies::InputError);
  CHECK_THROWS_AS(moe_shape(model::find_workload("deepseek-v3"), std::nullopt, std::nullopt), topologies::InputError);
  const MoeShape tiny = moe_shape(model::find_workload("deepseek-v3"), 32, 16);
  CHECK(tiny.experts == 256);
  CHECK(tiny.groups == 8);
  run_local_ranks(3, [&](Transport& transport) {
    CHECK_THROWS_AS(run_moe_layer(transport, tiny, 2, 1), topologies::InputError);  // 3 does not split 256
  });
}
