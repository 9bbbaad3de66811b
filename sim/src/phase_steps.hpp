// A phase's steps for one rank, as model::append_phase_steps gives them, for the replay engines (replayer.hpp,
// plan_events.hpp): a transfers phase's are made for every rank in one pass over its sends the first time a
// rank asks (append_phase_steps scans them all per rank: 5e8 steps' worth for tree-lse on 16,384 GPUs).
// Each rank asks once per phase. Private to sim.
#pragma once

#include <iterator>
#include <vector>

#include "treering/model/plan.hpp"

namespace treering::sim::detail {

class PhaseSteps {
 public:
  explicit PhaseSteps(const model::DecodePlan& plan) : plan_(plan), transfers_(plan.phases.size()) {}

  void append(int rank, size_t phase, std::vector<model::Step>& steps) {
    if (plan_.phases.at(phase).kind != model::PhaseKind::transfers) {
      return model::append_phase_steps(plan_, rank, phase, steps);
    }
    if (transfers_[phase].empty()) transfers_[phase] = model::transfers_phase_steps(plan_, phase);
    std::vector<model::Step>& mine = transfers_[phase].at(static_cast<size_t>(rank));
    steps.insert(steps.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
    std::vector<model::Step>().swap(mine);  // handed over
  }

 private:
  const model::DecodePlan& plan_;
  std::vector<std::vector<std::vector<model::Step>>> transfers_;  // per phase, per rank, until asked for
};

}  // namespace treering::sim::detail
