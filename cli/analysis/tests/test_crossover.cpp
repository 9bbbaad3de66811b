// The "wins from" scan (cli/analysis/include/treering/analysis/crossover.hpp), on outcomes written by hand.
#include <doctest/doctest.h>

#include "treering/analysis/crossover.hpp"

using treering::analysis::Outcome;
using treering::analysis::wins_from;

TEST_CASE("wins from: the shortest length of the last unbroken run of wins") {
  // wins at 80k, loses at 160k, wins at 320k and 640k: the run from 320k.
  CHECK(wins_from(
            {{80'000, Outcome::wins}, {160'000, Outcome::loses}, {320'000, Outcome::wins}, {640'000, Outcome::wins}}) ==
        320'000);
  // wins everywhere: from the shortest.
  CHECK(wins_from({{80'000, Outcome::wins}, {160'000, Outcome::wins}}) == 80'000);
}

TEST_CASE("wins from: never when the longest length is lost, or nothing is won") {
  CHECK_FALSE(wins_from({{80'000, Outcome::wins}, {160'000, Outcome::loses}}).has_value());
  CHECK_FALSE(wins_from({}).has_value());
  CHECK_FALSE(wins_from({{80'000, Outcome::no_contest}}).has_value());
}

TEST_CASE("wins from: a length without a contest neither breaks nor extends the run") {
  // 640k: neither fits; the run of wins at 160k and 320k goes on past it.
  CHECK(wins_from({{80'000, Outcome::loses},
                   {160'000, Outcome::wins},
                   {320'000, Outcome::wins},
                   {640'000, Outcome::no_contest}}) == 160'000);
  CHECK(wins_from({{80'000, Outcome::wins}, {160'000, Outcome::no_contest}, {320'000, Outcome::wins}}) == 80'000);
}
