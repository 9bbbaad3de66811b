// Skipping the ring's steady state. With equal blocks every round of the ring is the same: once every rank has
// started two consecutive rounds exactly one period apart, the state of the whole replay (compute, transfers
// in flight, shared links) is the previous round's shifted by that period, and so is every later round's
// (nothing changes from round to round). Each rank may then go straight to its last round, at the time it
// would have reached it: its start of the detected round + (rounds left) x period. Ranks jump when they reach
// the round after the furthest any rank had started at detection; they compute their time from the detected
// round, which all ranks had started before anyone jumped, so the transfers they no longer make cannot change
// it. Pure bookkeeping (no SimGrid), so that it can be tested on its own.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim {

namespace detail {

// A ring phase: pass-KV's (ring_pass) or pass-Q's (q_ring), replayed a round at a time.
inline bool is_ring_phase(model::PhaseKind kind) {
  return kind == model::PhaseKind::ring_pass || kind == model::PhaseKind::q_ring;
}

// Every rank holds the same number of tokens (more than none): the ring's rounds are all alike.
inline bool equal_blocks(const model::DecodePlan& plan) {
  for (const model::Shard& shard : plan.shards) {
    if (shard.count != plan.shards.front().count || shard.count == 0) return false;
  }
  return true;
}

// Whether a replay goes straight to the ring's last round once it is steady: equal blocks (pass-q's differ round
// to round), asked for, and no timeline to record.
inline bool skips_steady_rounds(const model::DecodePlan& plan, const ReplayOptions& options) {
  return options.skip_steady_rounds && !options.record_activities && equal_blocks(plan) &&
         !model::has_phase(plan, model::PhaseRole::q_ring);
}

}  // namespace detail

class RingSteadyState {
 public:
  // `rounds`: the ring's p rounds (0 .. p-1); `enabled` false turns it off (uneven blocks, traces).
  RingSteadyState(int ranks, int rounds, bool enabled)
      : ranks_(ranks),
        rounds_(rounds),
        enabled_(enabled && ranks >= 2 && rounds >= 4),
        last_start_s_(static_cast<size_t>(ranks), 0.0) {}

  // Rank `rank` starts round `round` at `time_s`. Returns when it would start the last round, if it should go
  // there now (skipping the rounds between), or nothing to carry on.
  std::optional<double> on_round_start(int rank, int round, double time_s) {
    if (!enabled_) return std::nullopt;
    if (jump_round_ >= 0 && round == jump_round_) {
      ++jumped_;
      return anchor_s_[static_cast<size_t>(rank)] + (rounds_ - 1 - detected_round_) * period_s_;
    }
    max_round_started_ = std::max(max_round_started_, round);
    const double step_s = time_s - last_start_s_[static_cast<size_t>(rank)];
    last_start_s_[static_cast<size_t>(rank)] = time_s;
    if (round < 1 || detected_round_ >= 0) return std::nullopt;
    Round& current = record(round, rank, step_s, time_s);
    if (current.count == ranks_) on_round_complete(round);
    return std::nullopt;
  }

  int detected_round() const { return detected_round_; }  // -1: never steady
  double period_s() const { return period_s_; }
  int jumped_ranks() const { return jumped_; }

 private:
  struct Round {
    int count = 0;
    double min_step_s = 0, max_step_s = 0;
    std::vector<double> start_s;
  };

  Round& record(int round, int rank, double step_s, double time_s) {
    Round& r = seen_[round];
    if (r.count == 0) {
      r.min_step_s = r.max_step_s = step_s;
      r.start_s.assign(static_cast<size_t>(ranks_), 0.0);
    }
    ++r.count;
    r.min_step_s = std::min(r.min_step_s, step_s);
    r.max_step_s = std::max(r.max_step_s, step_s);
    r.start_s[static_cast<size_t>(rank)] = time_s;
    return r;
  }

  // Steady: this round and the one before, every rank one and the same period after its previous start
  // (to 1e-12 of the period: floating-point noise, not a different schedule).
  void on_round_complete(int round) {
    const Round& current = seen_[round];
    const auto previous = seen_.find(round - 1);
    const double period = current.max_step_s;
    const double tolerance = 1e-12 * period;
    const bool steady = round >= 2 && previous != seen_.end() && previous->second.count == ranks_ &&
                        current.max_step_s - current.min_step_s <= tolerance &&
                        std::abs(previous->second.max_step_s - period) <= tolerance &&
                        previous->second.max_step_s - previous->second.min_step_s <= tolerance;
    if (steady && max_round_started_ + 1 < rounds_ - 1) {
      detected_round_ = round;
      period_s_ = period;
      anchor_s_ = current.start_s;
      jump_round_ = max_round_started_ + 1;
      seen_.clear();
      return;
    }
    seen_.erase(seen_.begin(), seen_.lower_bound(round - 1));  // keep this round and the one before
  }

  int ranks_, rounds_;
  bool enabled_;
  std::vector<double> last_start_s_;
  std::map<int, Round> seen_;
  int max_round_started_ = -1;
  int detected_round_ = -1;
  int jump_round_ = -1;
  double period_s_ = 0;
  std::vector<double> anchor_s_;
  int jumped_ = 0;
};

}  // namespace treering::sim
