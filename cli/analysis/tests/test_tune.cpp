// Folding equivalent strategies (cli/analysis/include/treering/analysis/tune.hpp), on strategies written by hand.
#include <doctest/doctest.h>

#include "treering/analysis/tune.hpp"

namespace model = treering::model;

namespace {

model::TunedStrategy strategy(model::DecodeAlgorithm algorithm, double latency_s) {
  model::TunedStrategy t;
  t.strategy.algorithm = algorithm;
  t.result.latency_s = latency_s;
  return t;
}

}  // namespace

TEST_CASE("tune folds equal strategies of one algorithm into the first, and counts them") {
  using A = model::DecodeAlgorithm;
  // tree 10 us twice (the second 1e-15 s apart: within 1e-9 relative), ring 10 us, tree 11 us.
  const std::vector<model::TunedStrategy> tuned{strategy(A::tree, 10e-6), strategy(A::tree, 10e-6 + 1e-15),
                                                strategy(A::ring, 10e-6), strategy(A::tree, 11e-6)};
  const auto folded = treering::analysis::fold_equivalents(tuned);
  REQUIRE(folded.size() == 3);
  CHECK(folded[0].first == &tuned[0]);
  CHECK(folded[0].second == 1);
  CHECK(folded[1].first == &tuned[2]);  // another algorithm at the same latency is not folded
  CHECK(folded[1].second == 0);
  CHECK(folded[2].first == &tuned[3]);
  CHECK(folded[2].second == 0);
}
