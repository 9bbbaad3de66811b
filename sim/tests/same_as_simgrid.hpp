// Replaying a plan on the event loop (sim/src/event_network.hpp) and on SimGrid's network, and requiring the
// same transfers, every rank's finish, the last rank's breakdown and phases, and the same timeline, to 1e-9.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "treering/sim/replay.hpp"

namespace treering::sim::testing {

inline ReplayOptions in_simgrid(ReplayOptions options) {
  options.skip_steady_rounds = false;  // every round, as the event loop replays them
  options.in_simgrid = true;
  return options;
}

// Spans in the same order on both sides: by rank, kind, phase and peer first (collective flows between two
// ranks at one instant end within rounding of each other, in either order), then by time.
inline void check_spans(std::vector<Activity> a, std::vector<Activity> b, double scale_s) {
  auto key = [](const Activity& x) {
    return std::tuple(x.rank, static_cast<int>(x.kind), x.phase, x.peer, x.start_s, x.end_s);
  };
  auto by_key = [&](const Activity& x, const Activity& y) { return key(x) < key(y); };
  std::sort(a.begin(), a.end(), by_key);
  std::sort(b.begin(), b.end(), by_key);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].rank == b[i].rank);
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].peer == b[i].peer);
    CHECK(a[i].phase == b[i].phase);
    CHECK(a[i].start_s == doctest::Approx(b[i].start_s).epsilon(1e-9).scale(scale_s));
    CHECK(a[i].end_s == doctest::Approx(b[i].end_s).epsilon(1e-9).scale(scale_s));
  }
}

// Two replays of one plan finish alike, to 1e-9 of the latency: the latency, every rank's finish, the last
// rank's breakdown and phases.
inline void check_same_finishes(const ReplayResult& events, const ReplayResult& simgrid) {
  const double scale_s = simgrid.latency_s;
  CHECK(events.latency_s == doctest::Approx(simgrid.latency_s).scale(1e-12).epsilon(1e-9));
  REQUIRE(events.rank_finish_s.size() == simgrid.rank_finish_s.size());
  for (size_t rank = 0; rank < events.rank_finish_s.size(); ++rank) {
    CHECK(events.rank_finish_s[rank] == doctest::Approx(simgrid.rank_finish_s[rank]).scale(1e-12).epsilon(1e-9));
  }
  const RankTimes& e = events.critical;
  const RankTimes& s = simgrid.critical;
  CHECK(e.rank == s.rank);
  CHECK(e.compute_s == doctest::Approx(s.compute_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.wait_intra_s == doctest::Approx(s.wait_intra_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.wait_inter_s == doctest::Approx(s.wait_inter_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.send_s == doctest::Approx(s.send_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.overlapped_s == doctest::Approx(s.overlapped_s).epsilon(1e-9).scale(scale_s));
  REQUIRE(e.phase_s.size() == s.phase_s.size());
  for (size_t phase = 0; phase < e.phase_s.size(); ++phase) {
    CHECK(e.phase_s[phase] == doctest::Approx(s.phase_s[phase]).epsilon(1e-9).scale(scale_s));
  }
}

// The event loop's replay of `plan` is SimGrid's, to 1e-9 of the latency.
inline void check_same_as_simgrid(const model::DecodeModel& model, const model::DecodePlan& plan,
                                  ReplayOptions options = {}) {
  options.skip_steady_rounds = false;  // equal blocks too: SimGrid's skip would take them otherwise
  const ReplayResult events = replay_plan(model, plan, options);
  const ReplayResult simgrid = replay_plan(model, plan, in_simgrid(options));
  CHECK(events.transfers_simulated == simgrid.transfers_simulated);
  check_same_finishes(events, simgrid);
  check_spans(events.activities, simgrid.activities, simgrid.latency_s);
}

}  // namespace treering::sim::testing
