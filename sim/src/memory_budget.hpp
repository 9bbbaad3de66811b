// Whether a replay fits in this machine's memory, checked before it starts: refused with the figures rather
// than killed by the kernel halfway. Private to sim.
#pragma once

namespace treering::sim {

// The replay's peak memory, estimated from its ranks, its collective flows and the flows that may be under way
// at once, for the network that runs it: 64 MB, 16 kB a rank (its state, routes, queues) and 256 B a collective
// flow in either (measured: sim/README.md, make bench; 5-6 kB a rank at 16,384 GPUs), and in SimGrid 40 kB more
// per flow under way (a sender and a receiver actor: 16 kB stacks, their contexts, the mailbox and the
// communication).
double replay_memory_bytes(int ranks, double collective_flows, double concurrent_flows, bool in_simgrid);

// Memory this process may still use: MemAvailable (/proc/meminfo), capped by the cgroup's memory.max. 0 when
// unknown.
double available_memory_bytes();

// Throws topologies::InputError naming both figures when the estimate exceeds 80 % of budget_bytes, the memory
// the replay may use (ReplayOptions::memory_budget_bytes; 0: available_memory_bytes(), and no check when that is
// unknown too).
void check_replay_memory(int ranks, double collective_flows, double concurrent_flows, bool in_simgrid,
                         double budget_bytes);

}  // namespace treering::sim
