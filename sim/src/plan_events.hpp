// The replay without SimGrid: the same ranks, channels, collectives and transfers as replayer.hpp's actors,
// run by an event loop of its own, at a fraction of the cost per transfer (a ring of p GPUs makes p (p - 1) of
// them; a 16,384-GPU tree's three all-reduces 196,596 flows).
//
// What it keeps of SimGrid's model, exactly:
// - a rank runs its steps in order: a kernel takes kernel_time_s; a ring send queues the block on the channel
//   to its successor and goes on (or, without overlap, waits until everything it sent has arrived); a receive
//   waits for the next transfer from that peer, in the order they were posted (SimGrid's mailbox with a
//   permanent receiver);
// - a ring channel moves its blocks one at a time: each waits the pair's latency (times the exchanges per
//   step), then moves;
// - the sends of a transfers phase leave together, each after its own latency, once the rank's earlier sends
//   have all arrived; the rank goes on to its receives and merge meanwhile;
// - a collective: the host's call time, then every rank waits for the last to arrive, then the algorithm's
//   latency and processing time, then all its flows (model::collective_schedule) move at once; every rank
//   leaves when the last flow has arrived;
// - a transfer's units (simulated_units.hpp) flow at a rate the links share max-min fairly with every other
//   transfer under way on them (shared_links.hpp);
// - events less than SimGrid's precision/timing (1e-9 s) after the earliest are handled at its instant, as
//   SimGrid's lazy updates do.
// What it leaves out: a transfers phase's send of no bytes (in SimGrid it waits for its receiver's call);
// such plans go to SimGrid. sim/tests/test_plan_events.cpp and
// test_ring_events.cpp check it against the SimGrid replay to 1e-9.
// Private to sim.
#pragma once

#include <vector>

#include "treering/model/collective_flows.hpp"
#include "treering/model/decode.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

// Whether replay_plan_events replays `plan` (every plan the model makes, but for sends of no bytes).
bool plan_events_replay(const model::DecodePlan& plan);

// The replay of such a plan, as replay_values (rank_accounts.hpp) packs it; `schedules` are the flows of its
// collective phases, in order. Throws std::logic_error when a rank is left waiting for a transfer that never
// comes (a plan not made by model::DecodeModel::plan).
std::vector<double> replay_plan_events(const model::DecodeModel& model, const model::DecodePlan& plan,
                                       const std::vector<model::CollectiveSchedule>& schedules,
                                       const ReplayOptions& options);

}  // namespace treering::sim::detail
