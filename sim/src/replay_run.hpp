// A replay as the ranks' programs take it (rank_programs.hpp): the GPUs taking part, numbered 0 .. n-1 (run
// ranks), and the groups of them that run a plan together, stage by stage: every GPU runs the plan of its group
// at stage 0, then at stage 1, ... (a TP x CP layer: every CP group's combine at stage 0, every TP group's
// all-reduces at stage 1). Private to sim.
#pragma once

#include <vector>

#include "treering/model/collective_flows.hpp"
#include "treering/model/decode.hpp"

namespace treering::sim::detail {

struct GroupRun {
  const model::DecodeModel* model = nullptr;  // its costs (its GPUs: plan->gpus, in rank order)
  const model::DecodePlan* plan = nullptr;
  int stage = 0;
  std::vector<model::CollectiveSchedule> schedules;  // its collective phases' flows, in the plan's order
  std::vector<int> members;                          // its ranks' run ranks
};

class ReplayRun {
 public:
  // The groups' GPUs in order of first appearance (stage by stage, group by group, rank by rank) are the run's.
  // Throws InputError when two groups of one stage share a GPU, std::logic_error when the groups' models are on
  // different topologies.
  explicit ReplayRun(std::vector<GroupRun> groups);

  const topologies::Topology& topology() const { return groups_.front().model->topology(); }
  int ranks() const { return static_cast<int>(gpus_.size()); }
  int stages() const { return stages_; }
  int gpu(int rank) const { return gpus_[static_cast<size_t>(rank)]; }
  const std::vector<int>& gpus() const { return gpus_; }
  const std::vector<GroupRun>& groups() const { return groups_; }
  const GroupRun& group(int index) const { return groups_[static_cast<size_t>(index)]; }
  // The group `rank` runs at `stage` (-1: none) and its rank there.
  int group_at(int rank, int stage) const { return group_at_[index(rank, stage)]; }
  int local_at(int rank, int stage) const { return local_at_[index(rank, stage)]; }

 private:
  size_t index(int rank, int stage) const {
    return static_cast<size_t>(stage) * gpus_.size() + static_cast<size_t>(rank);
  }
  std::vector<GroupRun> groups_;
  std::vector<int> gpus_;
  int stages_ = 1;
  std::vector<int> group_at_, local_at_;  // [stage][rank]
};

}  // namespace treering::sim::detail
