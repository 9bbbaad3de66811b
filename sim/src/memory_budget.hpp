// Whether a replay fits in this machine's memory, checked before it starts: refused with the figures rather
// than killed by the kernel halfway. Private to sim.
#pragma once

#include "treering/model/plan.hpp"

namespace treering::sim {

// The replay's peak memory, estimated from its ranks and collective flows, for the engine that runs it.
// Measured (sim/README.md, make bench): in SimGrid's actors 16,384 GPUs take 590-740 MB (36-45 kB a rank:
// actors with 16 kB stacks, routes and mailboxes), each collective flow about 200 B more; 64 kB a rank and
// 256 B a flow leave a margin. In the event loop 16,384 GPUs take 77-99 MB with their flows (5-6 kB a rank,
// 4 kB a rank for a ring at 1,024-4,096 GPUs): 16 kB a rank and the same 256 B a flow.
double replay_memory_bytes(const model::DecodePlan& plan, double collective_flows, bool in_simgrid);

// Memory this process may still use: MemAvailable (/proc/meminfo), capped by the cgroup's memory.max, or
// TREERING_MEMORY_BYTES when set (to give the simulator a budget of its own). 0 when unknown.
double available_memory_bytes();

// Throws std::invalid_argument naming both figures when the estimate exceeds what is available.
void check_replay_memory(const model::DecodePlan& plan, double collective_flows, bool in_simgrid);

}  // namespace treering::sim
