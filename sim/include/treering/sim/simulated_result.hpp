// A replay's outcome in the model's form (model::DecodeResult), so that the simulator's rows read like the
// model's: the simulated latency with the model's volumes and memory (the same plan), and a breakdown from the
// rank that finished last.
#pragma once

#include "treering/model/decode.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim {

// From `predicted` (the model's result for `plan`) and `replay` (a replay of it, with other groups' plans or
// alone, at stage 0): the latency (when the last GPU ended stage 0), token time and per-phase times are the
// replay's; the breakdown is stage 0's critical rank's (its group must be `plan`'s, the slowest): its compute; its
// waits for receives by where they came from (waiting on a peer of its own node that itself waited on the network
// counts as intra-node); its time in collectives, all inter-node when the GPUs span domains, else intra-node;
// overlapped = the time its own transfers moved bytes while it computed. A phase is marked as crossing domains when any
// of its transfers does (a collective: when the GPUs span domains).
model::DecodeResult simulated_result(const model::DecodeModel& decode, const model::DecodePlan& plan,
                                     const model::DecodeResult& predicted, const ReplayResult& replay);

}  // namespace treering::sim
