// Sharing between the groups of a layout (layout_model.hpp), which run the same plan side by side: on every link
// that flows of more than one group cross in the same phase, they all share its rate, as the simulator shares
// it. A NIC that k groups' ring edges cross at once gives each 1/k of it; the uplinks of an r:1 spine carry
// everything the groups send across it. Links that one group crosses alone are left to its own model, as for a
// group alone (whose collectives NCCL's formulas already time). Pure.
#pragma once

#include <vector>

#include "treering/model/decode.hpp"

namespace treering::model {

struct GroupSharing {
  // Per phase: the longest any link it shares with other groups needs for everything crossing it in that phase
  // (every group's bytes / the link's effective rate; 0: it shares none), and whether that link is scale-out.
  // Example: 8 ring edges of 268 MB each leaving a node through one 46 GB/s NIC: 8 x 268 MB / 46 GB/s = 46.6 ms.
  std::vector<double> bound_s;
  std::vector<char> bound_scale_out;
  // Per ring phase (ring_pass, q_ring), per rank: the least share its edge gets on a shared link (the link's
  // effective rate / the edges crossing it), 0 where it shares none. Example: 46 GB/s / 8 = 5.75 GB/s.
  std::vector<std::vector<double>> edge_share_Bps;
  bool shares = false;  // some link is shared with another group
};

// The flows of phase `phase` of `plan` as the simulator moves them, all at once: a ring's edges (rank -> rank + 1)
// with its largest block, a collective's flows with their wire bytes, a transfers phase's sends. (from, to, bytes).
struct PhaseFlow {
  int from = 0;
  int to = 0;
  double bytes = 0;
};
std::vector<PhaseFlow> phase_flows(const DecodeModel& model, const DecodePlan& plan, size_t phase);

// One per group (`models[g]` made `plans[g]`; the plans alike but for their GPUs). Plans of different phases
// (tree-lse over groups of different domains) are left alone (no sharing counted).
std::vector<GroupSharing> layout_sharing(const std::vector<const DecodeModel*>& models,
                                         const std::vector<DecodePlan>& plans);

// Each group of `groups` (GPU lists) running the collective `op` of `bytes` at once in a communicator of its own,
// as NCCL would pick it: the time the slowest of them takes, its latency plus the larger of its transfer and what
// the links it shares with other groups carry / their rate. Example: two TP groups of 8 GPUs whose all-reduces
// cross the same NIC take twice its transfer. One group, or groups that share no link: the collective model's
// time of the first.
double concurrent_collective_s(const topologies::Topology& topology, const std::vector<std::vector<int>>& groups,
                               CollectiveOp op, double bytes);

}  // namespace treering::model
