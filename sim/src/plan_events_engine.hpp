// The plan's event loop (plan_events.hpp says what it models): its state and steps. plan_events.cpp runs the
// ranks, plan_events_transfers.cpp moves what they send. Private to sim.
#pragma once

#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>
#include <vector>

#include "phase_steps.hpp"
#include "rank_accounts.hpp"
#include "ring_steady.hpp"
#include "shared_links.hpp"
#include "treering/model/collective_flows.hpp"
#include "treering/model/decode.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

// SimGrid's precision/timing (its default): an action due within this of the current instant ends at it.
constexpr double kSameInstant_s = 1e-9;

enum class EventKind : std::uint8_t { rank_wakes, channel_latency_over, post_send, transfer_done, collective_starts };

struct Event {
  double at_s;
  std::uint64_t order;  // creation order: events at one instant go first-made first
  EventKind kind;
  int index;              // the rank, channel, pending send, transfer or collective
  std::uint64_t version;  // transfer_done: stale once its transfer's rate changed
};

struct FiresLater {  // the queue\'s order: the earliest event on top, then the first made
  bool operator()(const Event& a, const Event& b) const {
    return a.at_s != b.at_s ? a.at_s > b.at_s : a.order > b.order;
  }
};

// The transfers posted from one rank to another and not yet received, oldest first: whether each has arrived.
struct PairQueue {
  std::deque<bool> arrived;
  long long taken = 0;   // received so far
  long long posted = 0;
};

// A ring channel (one direction between two ranks): its blocks one at a time, latency first.
struct RingChannel {
  int from = 0, to = 0;
  const model::DecodeModel::PairCost* cost = nullptr;
  const std::vector<topologies::LinkId>* links = nullptr;
  PairQueue* queue = nullptr;
  std::deque<double> queued_bytes;
  bool busy = false;  // a block in its latency or moving
};

// A transfers phase's send waiting out its latency.
struct PendingSend {
  int from = 0, to = 0, phase = 0;
  double bytes = 0;
};

enum class TransferKind : std::uint8_t { ring_block, phase_send, collective_flow };

// What a transfer under way (a SharedLinks id) belongs to.
struct TransferOwner {
  TransferKind kind = TransferKind::ring_block;
  int from = 0, to = 0, phase = -1;
  int index = 0;               // ring_block: its channel; collective_flow: its collective
  PairQueue* queue = nullptr;  // ring_block, phase_send: its pair's queue,
  long long sequence = 0;      // and its place there (start_transfer sets it)
};

struct CollectiveState {
  const model::CollectiveSchedule* schedule = nullptr;
  int phase = 0;
  int arrived = 0;
  std::vector<double> arrival_s;  // per rank, after its host's call
  size_t flows_left = 0;
};

enum class Wait : std::uint8_t { none, kernel, delivery, arrival, drain, host_call, collective, skip };

struct RankState {
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
  int last_send_phase = -1;
  size_t next_collective = 0;
  int last_channel = -1;             // the channel of its last ring send,
  int last_sender = -1;              // and the peer of its last receive,
  PairQueue* last_queue = nullptr;   // with its queue (lookups saved: a ring's rounds use the same ones)
  int batch_left = 0;  // its phase sends still moving
  double batch_first_start_s = 0;
  bool done = false;
};

class PlanEvents {
 public:
  PlanEvents(const model::DecodeModel& model, const model::DecodePlan& plan,
             const std::vector<model::CollectiveSchedule>& schedules, const ReplayOptions& options);
  std::vector<double> run();

 private:
  // plan_events.cpp: the ranks
  bool is_ring(size_t phase) const;
  bool load_steps(int rank);
  void run_rank(int rank);
  bool run_step(int rank, const model::Step& step);  // false: the rank waits
  void wake(int rank);
  bool post_phase_sends(int rank);  // false: the rank waits for its earlier sends first
  void arrive_at_collective(int rank);
  void schedule(double at_s, EventKind kind, int index, std::uint64_t version = 0) {
    events_.push({at_s, order_++, kind, index, version});
  }
  void handle(const Event& event);

  // plan_events_transfers.cpp: what moves
  const std::vector<topologies::LinkId>& route(int from, int to);
  RingChannel& channel(int from, int to);
  PairQueue& pair(int from, int to) { return pairs_[static_cast<long long>(from) * ranks_ + to]; }
  void start_block(RingChannel& path);  // its next block's latency, if it has one queued
  void move_block(RingChannel& path);   // then its bytes
  PairQueue& incoming(int rank, int from);  // pair(from, rank), through the rank's cache
  void start_transfer(TransferOwner owner, const std::vector<topologies::LinkId>& links, double units, double cap_Bps);
  void post_send(const PendingSend& send);
  void transfer_arrived(int id);
  void start_flows(int collective);
  void collective_over(CollectiveState& collective);
  void mark_arrived(const TransferOwner& owner);
  void sent(int rank);  // one of its sends has arrived

  const model::DecodeModel& model_;
  const model::DecodePlan& plan_;
  const ReplayOptions& options_;
  const std::vector<bool>* down_;
  const int ranks_;
  RankAccounts accounts_;
  SharedLinks links_;
  std::vector<RankState> state_;
  std::vector<RingChannel> channels_;
  std::unordered_map<long long, size_t> channel_of_pair_;
  std::unordered_map<long long, std::vector<topologies::LinkId>> routes_;
  std::unordered_map<long long, PairQueue> pairs_;
  std::vector<PendingSend> pending_sends_;
  std::vector<TransferOwner> owners_;  // by SharedLinks id
  std::vector<CollectiveState> collectives_;
  RingSteadyState steady_;
  PhaseSteps phase_steps_;
  std::priority_queue<Event, std::vector<Event>, FiresLater> events_;
  std::uint64_t order_ = 0;
  double now_s_ = 0;
  double transfers_ = 0;
  std::vector<double> finish_s_, phase_s_;
};

}  // namespace treering::sim::detail
