// The ring's steady-state bookkeeping on hand-made timelines (no simulator).
#include <doctest/doctest.h>

#include "../src/ring_steady.hpp"

using treering::sim::RingSteadyState;

TEST_CASE("steady after two rounds at the same period; every rank jumps to its own last round") {
  // 3 ranks, 10 rounds; rank r starts round j at 0.1 r + 2 j (period 2 from the start). Rounds 1 and 2 show the
  // period on every rank: detected at round 2, when the furthest rank had started round 2 -> jump at round 3.
  // Rank r reaches round 9 at 0.1 r + 2 x 9 = its start of round 2 + 7 x 2.
  RingSteadyState steady(3, 10, true);
  for (int round = 0; round <= 2; ++round) {
    for (int rank = 0; rank < 3; ++rank) CHECK_FALSE(steady.on_round_start(rank, round, 0.1 * rank + 2 * round));
  }
  CHECK(steady.detected_round() == 2);
  CHECK(steady.period_s() == doctest::Approx(2).scale(1e-12));
  for (int rank = 0; rank < 3; ++rank) {
    const auto last = steady.on_round_start(rank, 3, 0.1 * rank + 6);
    REQUIRE(last);
    CHECK(*last == doctest::Approx(0.1 * rank + 18).scale(1e-12));
  }
  CHECK(steady.jumped_ranks() == 3);
}

TEST_CASE("not steady while the ranks' periods differ, or when turned off") {
  // Rank 1 takes 3 per round, the others 2: never steady.
  RingSteadyState steady(2, 10, true);
  for (int round = 0; round < 6; ++round) {
    CHECK_FALSE(steady.on_round_start(0, round, 2.0 * round));
    CHECK_FALSE(steady.on_round_start(1, round, 3.0 * round));
  }
  CHECK(steady.detected_round() == -1);
  RingSteadyState off(2, 10, false);
  for (int round = 0; round < 6; ++round) {
    for (int rank = 0; rank < 2; ++rank) CHECK_FALSE(off.on_round_start(rank, round, 2.0 * round));
  }
  CHECK(off.detected_round() == -1);
}

TEST_CASE("a rank already ahead at detection jumps one round later, from the detected round") {
  // Rank 1 runs a round ahead in wall time: it has started round 3 when rank 0 completes round 2.
  RingSteadyState steady(2, 8, true);
  CHECK_FALSE(steady.on_round_start(1, 0, 0.0));
  CHECK_FALSE(steady.on_round_start(0, 0, 0.5));
  CHECK_FALSE(steady.on_round_start(1, 1, 1.0));
  CHECK_FALSE(steady.on_round_start(0, 1, 1.5));
  CHECK_FALSE(steady.on_round_start(1, 2, 2.0));
  CHECK_FALSE(steady.on_round_start(1, 3, 3.0));
  CHECK_FALSE(steady.on_round_start(0, 2, 2.5));  // round 2 complete: detected; rank 1 is at round 3 -> jump at 4
  CHECK(steady.detected_round() == 2);
  CHECK_FALSE(steady.on_round_start(0, 3, 3.5));
  const auto rank1 = steady.on_round_start(1, 4, 4.0);
  const auto rank0 = steady.on_round_start(0, 4, 4.5);
  REQUIRE(rank1);
  REQUIRE(rank0);
  CHECK(*rank1 == doctest::Approx(2.0 + 5 * 1.0).scale(1e-12));  // round 2 at 2.0, 5 rounds to round 7
  CHECK(*rank0 == doctest::Approx(2.5 + 5 * 1.0).scale(1e-12));
}
