// A collective replayed flow by flow (`treering collective --engine sim`, `validate --engine sim` on nccl-tests
// logs): every rank calls it, then the algorithm's latency (the model's), then all its flows
// (model::collective_schedule: ring and tree channels, NVLS, all-to-all's p (p - 1) sends, ...) move at once on
// their routes, sharing links max-min: across an r:1 spine an all-to-all that the spine paces takes about r
// times as long as across 1:1, which the collective model, timing the group from its tiers, does not see.
#pragma once

#include <string>
#include <vector>

#include "treering/model/collective_flows.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim {

struct SimulatedCollective {
  double time_s = 0;               // from the call to the last flow's arrival
  long long flows = 0;             // the flows it moved
  std::vector<double> link_bytes;  // per topology link: payload bytes that crossed it
  double busiest_utilisation = 0;  // the most loaded link's bytes / (its rate x time_s)
  std::string engine;              // "event loop" or "SimGrid 3.32.0"
};

// `group`'s collective `op` of `bytes` (nccl-tests' size) by `chosen` (model::estimate_collective's pick for it).
// Throws std::invalid_argument when the algorithm cannot run on the group (collective_schedule), as replay_groups.
SimulatedCollective simulate_collective(const topologies::Topology& topology, const model::CommGroup& group,
                                        model::CollectiveOp op, double bytes, const model::CollectiveCandidate& chosen,
                                        const ReplayOptions& options = {});

}  // namespace treering::sim
