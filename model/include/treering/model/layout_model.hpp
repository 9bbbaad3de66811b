// Predicting a TP x CP layout (layout.hpp): every CP group's combine on its heads, the slowest of them, and the
// whole decode step (step.hpp). Pure: the topology is read, never changed.
#pragma once

#include <memory>

#include <optional>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/layout.hpp"

namespace treering::model {

struct LayoutAttention {
  DecodeResult slowest;   // one layer's attention in the slowest CP group (its heads, its phases and memory)
  DecodeVolume volume;    // bytes sent by all CP groups together (per_gpu: the most any GPU sends)
  int slowest_group = 0;  // its index in LayoutGroups::cp_groups (replica x tp + its head slice)
  std::vector<double> group_latency_s;                  // every CP group's, in LayoutGroups::cp_groups' order
  std::shared_ptr<const topologies::ImplProfile> impl;  // the profile it was predicted with (none: the default)
};

// The groups the output projection and the MLP of every replica run in after `algorithm`'s combine: the TP
// groups, or each replica's tp x cp GPUs when the combine leaves the output split by head.
std::vector<std::vector<int>> post_attention_groups(const LayoutGroups& groups, DecodeAlgorithm algorithm);

class LayoutModel {
 public:
  LayoutModel(const topologies::Topology& topology, LayoutGroups groups);

  // The plan CP group t (LayoutGroups::cp_groups[t]) runs: `algorithm` over its cp GPUs, on the heads of one TP
  // slice (head_slice).
  DecodePlan plan(int t, DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                  const PlanOptions& options = {}) const;
  LayoutAttention attention(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                            const PlanOptions& options = {}) const;

  // The GPUs the output projection and the MLP split over after `algorithm`'s combine (step.hpp): a TP group,
  // or a replica's tp x cp GPUs when the combine leaves the output split by head.
  const CommGroup& post_attention_group(DecodeAlgorithm algorithm) const;

  // The EP group (Layout::experts.ep > 1): every GPU of the layout, replicas included, in its order.
  const CommGroup& ep_group() const { return ep_group_; }

  const LayoutGroups& groups() const { return groups_; }
  const DecodeModel& cp_model(int t) const { return cp_models_.at(static_cast<size_t>(t)); }
  const topologies::Topology& topology() const { return *topology_; }

 private:
  const topologies::Topology* topology_;
  LayoutGroups groups_;
  std::vector<DecodeModel> cp_models_;  // one per CP group
  CommGroup tp_group_;                  // the first TP group (all alike on a regular cluster)
  CommGroup all_group_;
  CommGroup ep_group_;
};

}  // namespace treering::model
