// Replaying a decode plan on the simulated cluster: every rank runs its own steps (model::steps_of) and every
// transfer crosses the links of its route, sharing them max-min fairly with the others under way (SimGrid's
// CM02 model on the platform of the topology). Two engines give the same results (tested to 1e-9): an event
// loop of our own (the default) and SimGrid 3.32's actors (ReplayOptions::in_simgrid).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"

namespace treering::sim {

// What a rank was doing, and when: computing, moving a send's bytes (after its latency), waiting for a
// receive, or taking part in a collective (from its arrival to the last flow's).
enum class ActivityKind { compute, send, wait, collective };
struct Activity {
  int rank = 0;
  ActivityKind kind = ActivityKind::compute;
  double start_s = 0;
  double end_s = 0;
  int peer = -1;   // send: to; wait: from
  int phase = -1;  // the plan's phase it belongs to (-1: not known, a ring channel's send)
};

// Where one rank's time went (spans can overlap: a ring's sends run during its compute).
struct RankTimes {
  int rank = 0;
  double compute_s = 0;
  double wait_intra_s = 0;   // waiting for receives from its own scale-up domain
  double wait_inter_s = 0;   // from other domains
  double collective_s = 0;   // inside collectives, from arriving to the last flow's arrival
  double send_s = 0;         // its transfers moving bytes (after their latency)
  double overlapped_s = 0;   // the part of send_s that ran while the rank computed
  std::vector<double> phase_s;  // per plan phase: from its first step to its last, on this rank
};

struct ReplayResult {
  std::vector<Activity> activities;    // every rank's timeline, for traces
  double latency_s = 0;                // when the last rank finished
  std::vector<double> rank_finish_s;   // per rank
  std::vector<double> link_bytes;      // per topology link (LinkId): bytes of the plan's sends that crossed it
  RankTimes critical;                  // the rank that finished last
  long long transfers_simulated = 0;   // point-to-point transfers the simulator moved (fewer than the plan's when
                                       // the ring's repeated rounds were skipped)
  std::string engine;                  // what replayed it: "event loop" or "SimGrid 3.32.0" (ReplayOptions::in_simgrid)
};


// A Chrome / Perfetto trace (JSON, "traceEvents"): one track per GPU with its compute and wait spans, and
// its sends as async spans (several can be in flight at once). Needs a replay run with record_activities.
std::string chrome_trace(const model::DecodePlan& plan, const ReplayResult& replay);

// What goes wrong in a what-if replay: slow GPUs (stragglers), links at a fraction of their bandwidth, cables
// out of service with the network's traffic routed around them (Topology::route with cables down).
struct Degradation {
  std::map<int, double> gpu_slowdown;                          // GPU -> its kernels take this many times as long
  std::map<topologies::LinkId, double> link_bandwidth_factor;  // directed link -> fraction of its bandwidth, (0, 1]
  std::vector<bool> cables_down;                               // per LinkId, both directions marked; empty: none
  bool empty() const { return gpu_slowdown.empty() && link_bandwidth_factor.empty() && cables_down.empty(); }
};
// The NIC GPU `gpu` uses, at `fraction` of its bandwidth (its links both ways). Throws std::invalid_argument for
// a GPU without a NIC, or a fraction outside (0, 1].
void slow_nic(const topologies::Topology& topology, int gpu, double fraction, Degradation& degradation);
// The cable between the devices named `a` and `b` ("leaf0", "spine3", "dgx-h100-0/nic0", as `treering topo dot`
// names them) out of service. Throws std::invalid_argument naming what does not exist.
void take_down(const topologies::Topology& topology, const std::string& a, const std::string& b, Degradation& degradation);

struct ReplayOptions {
  bool record_activities = false;  // keep every rank's timeline (for traces; ~3 p^2 spans for the ring)
  bool skip_steady_rounds = true;  // with equal blocks, stop replaying ring rounds once they repeat exactly
                                   // (ring_steady.hpp); off: every round, to check it or time the full replay
  Degradation degradation = {};    // none: the cluster as described
  bool in_simgrid = false;         // plans are replayed by an event loop of our own (sim/src/plan_events.hpp),
                                   // 10-30x faster than SimGrid's actors with the same results (tested to 1e-9);
                                   // true: by SimGrid's actors all the same, to check one by the other
};
// Compute steps take the compute model's time (attention at the rank's own rates, small kernels at the
// slowest rank's, as the model does). A send waits the model's point-to-point latency for its pair, then its
// bytes cross the route's links, sharing them with whatever else is in flight; sends to one peer go one at a
// time, in order (NCCL's per-peer FIFO). A receive waits for the matching send. A collective waits for every
// rank, then its algorithm's latency (the model's), then moves the algorithm's flows
// (model::collective_schedule) all at once, sharing links with each other. The ring's rounds: with equal blocks
// every round is alike, and once two consecutive rounds start exactly one period after the previous on every
// rank, the rest repeat it: each rank goes straight to its last round at the time it would have reached it (the
// same result as replaying them, tested; traces replay every round). Runs in this process (the event loop) or,
// with in_simgrid, in a child process (SimGrid's actors). Throws std::invalid_argument for a plan made for other
// GPUs, naming ranks it does not have or sending from a rank to itself, or a degradation outside its ranges,
// and std::runtime_error naming the GPUs when the replay deadlocks (some rank never finished) or a rank failed.
ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options = {});

}  // namespace treering::sim
