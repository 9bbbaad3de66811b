// The ring's replay without SimGrid: the same ranks, channels and transfers as replayer.hpp's actors, run by an
// event loop of its own, at a fraction of the cost per transfer (a ring of p GPUs makes p (p - 1) of them, and
// with uneven blocks the steady-state shortcut of ring_steady.hpp cannot skip any).
//
// What it keeps of SimGrid's model, exactly:
// - a rank runs its steps in order: a kernel takes kernel_time_s; a send queues the block on the channel to its
//   successor and goes on (or, without overlap, waits until everything it sent has arrived); a receive waits
//   for the next block its predecessor's channel delivers;
// - a channel moves its blocks one at a time: each waits the pair's latency (times the exchanges per step),
//   then its units (simulated_units.hpp) flow at a rate the links share max-min fairly with every other
//   transfer under way on them (SimGrid's CM02 model as the platform sets it: no latency on links, no TCP
//   window, no cross traffic, equal weights), recomputed whenever a transfer starts or ends;
// - events less than SimGrid's precision/timing (1e-9 s) after the earliest are handled at its instant, as
//   SimGrid's lazy updates do.
// What it leaves out: nothing the ring's plans use; plans with collectives or transfer phases go to SimGrid.
// sim/tests/test_ring_events.cpp checks it against the SimGrid replay to 1e-9 on clusters with and without
// shared links, uneven and empty blocks, overlap on and off, host round trips, degradations and pass-q.
// Private to sim.
#pragma once

#include <vector>

#include "treering/model/decode.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

// A ring (ring_pass or q_ring) whose other phases only compute: what replay_ring_events replays.
bool ring_events_replay(const model::DecodePlan& plan);

// The replay of such a plan, as replay_values (rank_accounts.hpp) packs it. Throws std::logic_error when a rank
// is left waiting for a block that never comes (a plan not made by model::DecodeModel::plan).
std::vector<double> replay_ring_events(const model::DecodeModel& model, const model::DecodePlan& plan,
                                       const ReplayOptions& options);

}  // namespace treering::sim::detail
