// Replaying decode plans on the simulated cluster: every GPU runs its own steps (model::steps_of) of its
// group's plan, and every transfer crosses the links of its route, sharing them max-min fairly with every
// other transfer under way, of its group or any other (SimGrid's CM02 model on the platform of the topology).
// One program per rank, run on one of two network engines that give the same results (tested to 1e-9): an
// event loop of our own (the default) and SimGrid 3.32 (ReplayOptions::in_simgrid).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"

namespace treering::sim {

// What a rank was doing, and when: computing, moving a send's bytes (after its latency), waiting for a
// receive, or taking part in a collective (from its arrival to the last flow's).
enum class ActivityKind { compute, send, wait, collective };
struct Activity {
  int rank = 0;  // of the replay (ReplayResult::gpus)
  ActivityKind kind = ActivityKind::compute;
  double start_s = 0;
  double end_s = 0;
  int peer = -1;   // send: to; wait: from
  int phase = -1;  // the plan's phase it belongs to (-1: not known, a ring channel's send)
  int group = 0;   // the plan (GroupPlan) it belongs to
};

// Where one rank's time went (spans can overlap: a ring's sends run during its compute).
struct RankTimes {
  int rank = 0;
  double compute_s = 0;
  double wait_intra_s = 0;      // waiting for receives from its own scale-up domain
  double wait_inter_s = 0;      // from other domains
  double collective_s = 0;      // inside collectives, from arriving to the last flow's arrival
  double send_s = 0;            // its transfers moving bytes (after their latency)
  double overlapped_s = 0;      // the part of send_s that ran while the rank computed
  std::vector<double> phase_s;  // per plan phase: from its first step to its last, on this rank
};

// One stage of a replay (GroupPlan::stage): every GPU's plan at that stage.
struct StageOutcome {
  std::vector<double> finish_s;  // per rank: when it finished its plan of the stage (-1: it had none)
  RankTimes critical;            // the rank that finished the stage last: its time in it, its plan's phases
  int critical_group = 0;        // its plan
};

struct ReplayResult {
  std::vector<Activity> activities;   // every rank's timeline, for traces
  double latency_s = 0;               // when the last rank finished
  std::vector<int> gpus;              // rank -> GPU (one plan: its GPUs, in its rank order)
  std::vector<double> rank_finish_s;  // per rank
  std::vector<double> link_bytes;     // per topology link (LinkId): bytes of the plans' sends that crossed it
  RankTimes critical;                 // the rank that finished last: its time over every stage, its phases stage
                                      // after stage
  std::vector<StageOutcome> stages;
  long long transfers_simulated = 0;   // point-to-point transfers the simulator moved (fewer than the plan's when
                                       // the ring's repeated rounds were skipped or one group stood for others)
  std::string engine;                  // what replayed it: "event loop" or "SimGrid 3.32.0" (ReplayOptions::in_simgrid)
  int groups = 1;                      // the plans of the replay
  int groups_replayed = 1;             // fewer when identical groups that share no link were replayed as one
  std::vector<std::string> shortcuts;  // what the replay did not replay event by event, and why (empty: nothing):
                                       // "steady ring rounds skipped", "rings computed round by round (no block
                                       // shares a link)", "1 of 8 identical groups (they share no link)"
};

// One plan of a replay of several: the model that made it (its GPUs, in its rank order), and when it runs: each
// GPU runs its plan of stage 0, then of stage 1, ... (a TP x CP layer: every CP group's combine, then every TP
// group's all-reduces). The groups of one stage have no GPU in common.
struct GroupPlan {
  const model::DecodeModel* model = nullptr;
  const model::DecodePlan* plan = nullptr;
  int stage = 0;
  // Its collective phases' flows, in order (none: the model's pick for each, DecodeModel::collective_schedule).
  const std::vector<model::CollectiveSchedule>* schedules = nullptr;
};

// A Chrome / Perfetto trace (JSON, "traceEvents"): one track per GPU with its compute and wait spans, and
// its sends as async spans (several can be in flight at once). Needs a replay run with record_activities.
std::string chrome_trace(const std::vector<GroupPlan>& groups, const ReplayResult& replay);
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
void take_down(const topologies::Topology& topology, const std::string& a, const std::string& b,
               Degradation& degradation);

struct ReplayOptions {
  bool record_activities = false;        // keep every rank's timeline (for traces; ~3 p^2 spans for the ring)
  bool skip_steady_rounds = true;        // with equal blocks, stop replaying ring rounds once they repeat exactly
                                         // (ring_steady.hpp); off: every round, to check it or time the full replay
  Degradation degradation = {};          // none: the cluster as described
  bool in_simgrid = false;               // the network is an event loop of our own (sim/src/event_network.hpp), 10-30x
                                         // faster than SimGrid with the same results (tested to 1e-9); true: SimGrid's,
                                         // in a child process, to check one by the other
  bool one_of_identical = true;          // groups that share no link and are alike (GPUs, routes, link rates) are
                                         // replayed as one, the others given its times; false: every group
  std::function<void(double)> progress;  // hears the share of the replay done, now and then (empty: nothing)
  double memory_budget_bytes = 0;        // the memory the replay may use (80 % of it); 0: what this machine has
                                         // available (MemAvailable, capped by the cgroup's limit)
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
// with in_simgrid, in a child process (SimGrid). Throws std::logic_error (a bug) for a plan made for other
// GPUs, naming ranks it does not have or sending from a rank to itself, InputError for a degradation outside its
// ranges, and std::runtime_error naming the GPUs when the replay deadlocks (some rank never finished) or a rank failed.
ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan,
                         const ReplayOptions& options = {});

// Several plans at once on one cluster (GroupPlan), their transfers sharing links: every CP group of a layout
// side by side, and the TP groups after them. As replay_plan for each, and besides: throws
// std::logic_error for no plan or plans of different clusters, InputError for two plans of one stage on one GPU.
ReplayResult replay_groups(const std::vector<GroupPlan>& groups, const ReplayOptions& options = {});

}  // namespace treering::sim
