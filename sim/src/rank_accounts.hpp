// What a replay books per rank (rank_programs.hpp): its kernels' times, where its time went stage by stage, and
// its timeline. Private to sim.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

// How long `step` (a compute step) runs on `rank` (a rank of `plan`): a host step its fixed time, an empty
// shard's attention no kernel, else launches + max(bytes / HBM, FLOPs / peak), times the GPU's slowdown. E.g.
// an H100 (3.35 TB/s) reading 335 MB in one kernel of 5 us launch: 5 us + 100 us = 105 us; twice that at
// slowdown 2.
double kernel_time_s(const model::DecodeModel& model, const model::DecodePlan& plan, const Degradation& degradation,
                     int rank, const model::Step& step);

class RankAccounts {
 public:
  // `domain_of_rank`: each rank's scale-up domain (a wait for a peer of another domain is inter-node).
  RankAccounts(std::vector<int> domain_of_rank, int stages, bool record);

  // From now on `rank`'s time counts towards `stage`.
  void set_stage(int rank, int stage) { stage_[static_cast<size_t>(rank)] = stage; }
  RankTimes& current(int rank) {
    return totals_[static_cast<size_t>(stage_[static_cast<size_t>(rank)])][static_cast<size_t>(rank)];
  }
  const RankTimes& at(int stage, int rank) const {
    return totals_[static_cast<size_t>(stage)][static_cast<size_t>(rank)];
  }

  // A span on a rank's timeline: added to its totals (sends are counted by busy_sending), kept if recording.
  void note(const Activity& activity);

  // A kernel (or host step) of `rank` runs over [start_s, end_s].
  void kernel(int rank, double start_s, double end_s);

  // A rank's own transfer moved bytes over [start_s, end_s]: how long, and how much of it ran beside the rank's
  // compute, i.e. under the last two kernels that started before it ended (a ring send runs beside its round's
  // attention and, when slow, the next round's). A kernel starting at end_s, the same instant, is not one of
  // them, whichever of the two the engine happens to handle first. E.g. a send over [10, 40] us beside kernels
  // [0, 30] and [30, 60]: 20 + 10 = 30 us under compute.
  void busy_sending(int rank, double start_s, double end_s);

  std::vector<std::pair<double, double>> last_send;  // per rank: its last transfer's duration, and under compute
  std::vector<Activity> activities;                  // when recording

 private:
  std::vector<int> domain_of_rank_;
  std::vector<int> stage_;
  std::vector<std::vector<RankTimes>> totals_;  // [stage][rank]
  // Per rank, its last four kernels, newest last (zero-length ones at one instant can push out the two wanted).
  std::vector<std::array<std::pair<double, double>, 4>> recent_kernels_;
  bool record_;
};

// A rank of a steady ring goes from round `round` straight to its last at last_round_s (ring_steady.hpp): the
// skipped rounds booked as they would have run, each the same attention, the rest of the period waiting for
// the block from the previous rank, and its last send's time and overlap once per round. `local`: the rank in
// `plan`, `rank`: in the accounts. E.g. 3 rounds skipped of 10 us attention each, from 100 us to 160 us: 30 us
// compute, 30 us waiting.
void book_skipped_rounds(RankAccounts& accounts, int rank, const model::DecodeModel& model,
                         const model::DecodePlan& plan, const Degradation& degradation, int local, int round,
                         double now_s, double last_round_s);

}  // namespace treering::sim::detail
