// The MoE dispatch or combine of a whole EP group replayed flow by flow (`treering collective --op moe-dispatch
// --engine sim`, and the step's exchanges): the kernel's latency (the model's), then every pair's traffic
// (model::moe_exchange_flows) at once on its route, sharing links max-min with every other pair's: the
// low-latency kernel's writes go out by the sender's NIC even inside a node (Topology::route_through_nics), so
// GPUs that share a NIC, rails that meet only at a spine and an oversubscribed spine slow it; the normal kernel's
// stay on their rail across nodes and on NVLink inside. On our event loop only (SimGrid's routes are the
// topology's ordinary ones).
#pragma once

#include "treering/model/moe_exchange.hpp"
#include "treering/sim/collective_replay.hpp"

namespace treering::sim {

// `group`: the EP group `exchange` was estimated for (model::estimate_moe_exchange). Throws InputError with
// ReplayOptions::in_simgrid (not supported) or a degradation outside its ranges.
SimulatedCollective simulate_moe_exchange(const topologies::Topology& topology, const model::CommGroup& group,
                                          const model::MoeExchange& exchange, const ReplayOptions& options = {});

}  // namespace treering::sim
