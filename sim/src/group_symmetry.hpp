// When the groups of a replay need not all be replayed: groups that share no link cannot slow each other, and a
// group that is another's image (the same plan, its ranks on GPUs alike, its flows on routes alike) finishes
// exactly when that one does. Private to sim.
#pragma once

#include <vector>

#include "replay_run.hpp"

namespace treering::sim::detail {

// The point-to-point and collective flows `group` moves, as (from, to) ranks of the group: its ring's edges,
// its transfers, its collectives' flows; in a fixed order.
std::vector<std::pair<int, int>> group_flows(const GroupRun& group);

// Whether every group is at stage 0, no link carries flows of two groups, and every group is the first one's
// image: the same plan but for its GPUs; rank by rank GPUs of the same node group and compute rates, in the same
// pattern of scale-up domains; flow by flow the same collective choices and routes whose links have the same
// rates and are shared within the group the same way. `link_units_per_s`: every link's rate.
bool groups_alike_and_apart(const std::vector<GroupRun>& groups, const std::vector<double>& link_units_per_s);

}  // namespace treering::sim::detail
