// A replay's GPUs and groups, stage by stage (replay_run.hpp).
#include "replay_run.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace treering::sim::detail {

ReplayRun::ReplayRun(std::vector<GroupRun> groups) : groups_(std::move(groups)) {
  if (groups_.empty()) throw std::logic_error("replay: no plan to replay");
  std::unordered_map<int, int> rank_of_gpu;
  stages_ = 1;
  for (const GroupRun& group : groups_) {
    if (&group.model->topology() != &groups_.front().model->topology()) {
      throw std::logic_error("replay: the plans were made for different clusters");
    }
    if (group.stage < 0) throw std::logic_error("replay: a plan at a negative stage");
    stages_ = std::max(stages_, group.stage + 1);
  }
  for (int stage = 0; stage < stages_; ++stage) {  // GPUs in order of first appearance
    for (const GroupRun& group : groups_) {
      if (group.stage != stage) continue;
      for (int gpu : group.plan->gpus) {
        if (rank_of_gpu.emplace(gpu, static_cast<int>(gpus_.size())).second) gpus_.push_back(gpu);
      }
    }
  }
  group_at_.assign(static_cast<size_t>(stages_) * gpus_.size(), -1);
  local_at_.assign(group_at_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g) {
    GroupRun& group = groups_[g];
    group.members.clear();
    for (size_t local = 0; local < group.plan->gpus.size(); ++local) {
      const int rank = rank_of_gpu.at(group.plan->gpus[local]);
      const size_t at = index(rank, group.stage);
      if (group_at_[at] >= 0) {
        throw topologies::InputError("replay: GPU " + std::to_string(group.plan->gpus[local]) +
                                     " is in two plans of stage " + std::to_string(group.stage));
      }
      group_at_[at] = static_cast<int>(g);
      local_at_[at] = static_cast<int>(local);
      group.members.push_back(rank);
    }
  }
}

}  // namespace treering::sim::detail
