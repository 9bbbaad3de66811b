// A phase's steps for one rank, as model::append_phase_steps gives them, for the ranks' programs
// (rank_programs.hpp): a transfers phase's are made for every rank in one pass over its sends the first time a
// rank asks (append_phase_steps scans them all per rank: 5e8 steps' worth for tree-lse on 16,384 GPUs).
// Each rank asks once per phase. Private to sim.
#pragma once

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/plan.hpp"

namespace treering::sim::detail {

// The latencies of a rank's sends posted together (a transfers phase), in their order: the model's
// (DecodeModel::group_send_latencies_s, proxy posts included), so that both engines charge the same.
inline std::vector<double> group_latencies_s(const model::DecodeModel& model, int rank,
                                             const std::vector<model::Step>& sends) {
  std::vector<int> peers;
  std::vector<double> bytes;
  for (const model::Step& send : sends) peers.push_back(send.peer), bytes.push_back(send.bytes);
  return model.group_send_latencies_s(rank, peers, bytes);
}

// Indices of `latencies_s`, shortest first (ties in their order): the order the sends leave in.
inline std::vector<size_t> by_latency(const std::vector<double>& latencies_s) {
  std::vector<size_t> order(latencies_s.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return latencies_s[a] < latencies_s[b]; });
  return order;
}

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
