// The ranks' programs (rank_programs.hpp): what a replay hands back.
#include <algorithm>

#include "rank_programs.hpp"

namespace treering::sim::detail {
namespace {

size_t last_of(const std::vector<double>& finish_s) {
  return static_cast<size_t>(std::max_element(finish_s.begin(), finish_s.end()) - finish_s.begin());
}

void add_times(RankTimes& sum, const RankTimes& t) {
  sum.compute_s += t.compute_s;
  sum.wait_intra_s += t.wait_intra_s;
  sum.wait_inter_s += t.wait_inter_s;
  sum.collective_s += t.collective_s;
  sum.send_s += t.send_s;
  sum.overlapped_s += t.overlapped_s;
}

}  // namespace

ReplayResult RankPrograms::result() const {
  ReplayResult r;
  r.activities = accounts_.activities;
  r.gpus = run_.gpus();
  r.rank_finish_s = finish_s_;
  r.latency_s = finish_s_.empty() ? 0.0 : *std::max_element(finish_s_.begin(), finish_s_.end());
  r.transfers_simulated = static_cast<long long>(transfers_);
  r.groups = r.groups_replayed = static_cast<int>(run_.groups().size());
  if (steady_.detected_round() >= 0) r.shortcuts.push_back("steady ring rounds skipped");
  if (rings_alone_) r.shortcuts.push_back("rings computed round by round (no block shares a link)");
  const size_t ranks = static_cast<size_t>(run_.ranks());
  auto phases_of = [&](size_t rank, int stage) {
    const int group = run_.group_at(static_cast<int>(rank), stage);
    if (group < 0) return std::vector<double>();
    const size_t first = phase_offset_[static_cast<size_t>(stage) * ranks + rank];
    const size_t count = run_.group(group).plan->phases.size();
    return std::vector<double>(phase_s_.begin() + static_cast<std::ptrdiff_t>(first),
                               phase_s_.begin() + static_cast<std::ptrdiff_t>(first + count));
  };
  for (int stage = 0; stage < run_.stages(); ++stage) {
    StageOutcome outcome;
    outcome.finish_s.assign(stage_finish_s_.begin() + static_cast<std::ptrdiff_t>(stage * ranks),
                            stage_finish_s_.begin() + static_cast<std::ptrdiff_t>((stage + 1) * ranks));
    const size_t last = last_of(outcome.finish_s);
    outcome.critical = accounts_.at(stage, static_cast<int>(last));
    outcome.critical.phase_s = phases_of(last, stage);
    outcome.critical_group = run_.group_at(static_cast<int>(last), stage);
    r.stages.push_back(std::move(outcome));
  }
  const size_t last = last_of(finish_s_);
  r.critical.rank = static_cast<int>(last);
  for (int stage = 0; stage < run_.stages(); ++stage) {
    add_times(r.critical, accounts_.at(stage, static_cast<int>(last)));
    const std::vector<double> phases = phases_of(last, stage);
    r.critical.phase_s.insert(r.critical.phase_s.end(), phases.begin(), phases.end());
  }
  return r;
}

}  // namespace treering::sim::detail
