// The ranks' programs, written once for both engines (flow_network.hpp): every GPU runs the steps of its
// group's plan (model::steps_of, the ring a round at a time), stage after stage, and its transfers cross the
// network as flows that share links with every other group's.
//
// What it keeps of SimGrid's model, exactly:
// - a rank runs its steps in order: a kernel takes kernel_time_s; a ring send queues the block on the channel
//   to its successor and goes on (or, without overlap, waits until everything it sent has arrived); a receive
//   waits for the next transfer from that peer, in the order they were posted (a mailbox with a permanent
//   receiver);
// - a ring channel moves its blocks one at a time: each waits the pair's latency (times the exchanges per
//   step), then moves;
// - the sends of a transfers phase leave together, each after its own latency, once the rank's earlier sends
//   have all arrived; the rank goes on to its receives and merge meanwhile;
// - a collective: the host's call time, then every rank of the group waits for the last to arrive, then the
//   algorithm's latency, then all its flows (model::collective_schedule) move at once; every rank leaves when
//   the last flow has arrived;
// - a transfer's units (simulated_units.hpp) flow at a rate the links share max-min fairly with every other
//   transfer under way on them, of any group;
// - with equal blocks, a ring's steady rounds are skipped once every rank of the run repeats them exactly
//   (ring_steady.hpp).
// Private to sim.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "flow_network.hpp"
#include "phase_steps.hpp"
#include "rank_accounts.hpp"
#include "replay_run.hpp"
#include "ring_steady.hpp"
#include "simulated_units.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

// The transfers posted from one rank to another and not yet received, oldest first: whether each has arrived.
struct PairQueue {
  std::deque<bool> arrived;
  long long taken = 0;  // received so far
  long long posted = 0;
};

// A ring channel (one direction between two ranks): its blocks one at a time, latency first.
struct RingChannel {
  int from = 0, to = 0;  // run ranks
  const model::DecodeModel::PairCost* cost = nullptr;
  const std::vector<topologies::LinkId>* links = nullptr;
  PairQueue* queue = nullptr;
  std::deque<double> queued_bytes;
  int exchanges = 1;  // latencies per block (DecodePlan::ring_exchanges_per_step)
  bool busy = false;  // a block in its latency or moving
  // The pair cost at the last block's size (a ring's blocks have one or two sizes): latency, units, rate cap.
  double sized_bytes = -1, latency_s = 0, units = 0, cap_Bps = 0;
  void size_for(double bytes) {
    if (bytes == sized_bytes) return;
    sized_bytes = bytes;
    latency_s = exchanges * cost->at(bytes).latency_s;
    units = static_cast<double>(simulated_size(bytes * cost->size_factor(bytes)));
    cap_Bps = cost->rate_cap_Bps(bytes);
  }
};

// A transfers phase's send waiting out its latency.
struct PendingSend {
  int from = 0, to = 0, phase = 0;  // run ranks
  double bytes = 0;
  int group = 0, from_local = 0, to_local = 0;  // the group it was posted in, and the ranks there
};

enum class TransferKind : std::uint8_t { ring_block, phase_send, collective_flow };

// What a flow under way (by its tag) belongs to.
struct TransferOwner {
  TransferKind kind = TransferKind::ring_block;
  int from = 0, to = 0, phase = -1;  // run ranks
  int index = 0;                     // ring_block: its channel; collective_flow: its collective
  PairQueue* queue = nullptr;        // ring_block, phase_send: its pair's queue,
  long long sequence = 0;            // and its place there (start_transfer sets it)
  double start_s = 0;
  int group = -1;  // the group whose plan sent it (-1: the sender's at the time)
};

struct CollectiveState {
  int group = 0;
  const model::CollectiveSchedule* schedule = nullptr;
  int phase = 0;
  int arrived = 0;
  std::vector<double> arrival_s;  // per rank of the group, after its host's call
  size_t flows_left = 0;
};

enum class Wait : std::uint8_t { none, kernel, delivery, arrival, drain, host_call, collective, skip, ring_alone };

struct RankState {
  int stage = -1, group = -1, local = -1;  // where it is: its stage, its group there and its rank in it
  size_t phase = 0;
  int round = -1;  // in a ring phase: the round whose steps are loaded; elsewhere ranks once loaded
  std::vector<model::Step> steps;
  std::vector<model::Step> phase_sends;  // a transfers phase's sends, not yet posted
  size_t next = 0;
  double phase_start_s = 0;
  double skip_until_s = -1;  // a steady ring: its last round's steps are loaded, to start then
  Wait wait = Wait::none;
  double waiting_since_s = 0;  // the step's start
  const model::Step* waiting_step = nullptr;
  long long issued = 0, delivered = 0;  // its sends (ring blocks and phase sends)
  long long last_send_phase = -1;       // stage x 2^20 + phase of its last send
  size_t next_collective = 0;
  int last_channel = -1;            // the channel of its last ring send,
  int last_sender = -1;             // and the peer of its last receive,
  PairQueue* last_queue = nullptr;  // with its queue (lookups saved: a ring's rounds use the same ones)
  int batch_left = 0;               // its phase sends still moving
  double batch_first_start_s = 0;
  bool done = false;
  bool parked = false;  // waiting for its group to enter a ring computed without events (rank_programs_ring.cpp)
};

class AloneRing;  // rank_programs_ring.cpp

class RankPrograms final : public FlowClient {
  friend class AloneRing;

 public:
  // `progress` (may be empty) hears the share of the work done, now and then.
  RankPrograms(const ReplayRun& run, const ReplayOptions& options, FlowNetwork& network);
  // Runs every rank to its end on the network. Throws std::runtime_error naming the GPUs when some rank never
  // finished (a deadlock: a plan not made by model::DecodeModel::plan).
  ReplayResult run();

  void begin() override;
  void on_wakeup(Wakeup wakeup) override;
  void on_flow_done(int tag) override;

 private:
  enum WakeupKind : std::uint8_t { rank_wakes, channel_latency_over, send_due, collective_starts };
  // rank_programs.cpp: the ranks
  const GroupRun& group_of(const RankState& state) const { return run_.group(state.group); }
  bool enter_stage(int rank, int from_stage);  // false: no stage left
  bool load_steps(int rank);
  void run_rank(int rank);
  bool run_step(int rank, const model::Step& step);  // false: the rank waits
  void wake(int rank);
  bool post_phase_sends(int rank);  // false: the rank waits for its earlier sends first
  void arrive_at_collective(int rank);
  void schedule(double at_s, WakeupKind kind, int index) { network_.at(at_s, {kind, index}); }
  void count_work(double units);
  ReplayResult result() const;

  // rank_programs_ring.cpp: a ring whose blocks each cross links nothing else uses, round by round in order
  // without events (the same times: each block alone on its route takes latency + units / its slowest link).
  bool rings_alone() const;
  void park_in_ring(int rank);
  void run_ring_alone(int group);

  // rank_programs_transfers.cpp: what moves
  int run_rank_of(const RankState& state, int local) const {
    return group_of(state).members[static_cast<size_t>(local)];
  }
  const std::vector<topologies::LinkId>& route(int from, int to);
  RingChannel& channel(int from, int to);
  PairQueue& pair(int from, int to) { return pairs_[static_cast<long long>(from) * run_.ranks() + to]; }
  void start_block(RingChannel& path);      // its next block's latency, if it has one queued
  void move_block(RingChannel& path);       // then its bytes
  PairQueue& incoming(int rank, int from);  // pair(from, rank), through the rank's cache
  void start_transfer(TransferOwner owner, const std::vector<topologies::LinkId>& links, double units, double cap_Bps);
  void post_send(const PendingSend& send);
  void transfer_arrived(int tag);
  void start_flows(int collective);
  void collective_over(CollectiveState& collective);
  void mark_arrived(const TransferOwner& owner);
  void sent(int rank);  // one of its sends has arrived

  const ReplayRun& run_;
  const ReplayOptions& options_;
  FlowNetwork& network_;
  const std::vector<bool>* down_;
  RankAccounts accounts_;
  std::vector<RankState> state_;
  std::vector<PhaseSteps> phase_steps_;          // per group
  std::vector<std::vector<int>> collective_of_;  // per group: its collectives' indices into collectives_
  std::vector<RingChannel> channels_;
  std::unordered_map<long long, size_t> channel_of_pair_;
  std::unordered_map<long long, std::vector<topologies::LinkId>> routes_;
  std::unordered_map<long long, PairQueue> pairs_;
  std::vector<PendingSend> pending_sends_;
  std::vector<TransferOwner> owners_;  // by tag
  std::vector<int> free_tags_;
  std::vector<CollectiveState> collectives_;
  RingSteadyState steady_;
  bool rings_alone_ = false;                       // every group's ring computed without events
  std::vector<std::vector<double>> ring_entry_s_;  // per group: when each rank entered its ring
  std::vector<int> ring_entered_;                  // per group: ranks that did
  double transfers_ = 0;
  std::vector<double> finish_s_;
  std::vector<double> stage_finish_s_;  // [stage][rank], -1: not in it
  std::vector<double> phase_s_;         // per rank, per phase of its plans: phase_offset_[rank] on
  std::vector<size_t> phase_offset_;    // [stage][rank]
  double work_total_ = 0, work_done_ = 0, work_told_ = 0;
};

}  // namespace treering::sim::detail
