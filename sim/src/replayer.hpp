// The replay's machinery (replay.hpp says what it does): one actor per rank running its steps, the ring's
// channel daemons, per-phase senders and collectives, on the SimGrid platform of the topology. Private to sim.
#pragma once

#include <simgrid/s4u.hpp>

#include <array>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "phase_steps.hpp"
#include "platform.hpp"
#include "rank_accounts.hpp"
#include "ring_steady.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim::detail {

namespace sg4 = simgrid::s4u;

// Transfers go through mailboxes between a sending and a receiving actor: SimGrid 3.32 keeps every detached
// transfer (Comm::sendto) in one list and removes each finished one by a linear search, O(transfers in flight)
// each, which made a 1,024-GPU ring quadratic; mailbox transfers are only on their two actors' lists.
extern int token;  // the payload every transfer carries (the bytes are simulated)

sg4::Mailbox* mailbox(char kind, int from, int to);  // "<kind><from>><to>"
// `comm` never faster than cap_Bps (0: no cap), as the event loop's SharedLinks caps a transfer.
sg4::CommPtr capped(sg4::CommPtr comm, double cap_Bps);

// One direction between two ranks: a daemon actor moves its queued sends one at a time, in order.
struct Channel {
  std::deque<double> queued_bytes;
  sg4::SemaphorePtr queued = sg4::Semaphore::create(0);
};

// A rank's sends: those of a later phase wait until the earlier ones have arrived (its port takes them in the
// plan's order; within a phase they go at once and share it).
struct Outbox {
  int last_phase = -1;
  long long issued = 0;
  long long confirmed = 0;
  sg4::SemaphorePtr delivered = sg4::Semaphore::create(0);
};

// One collective of the plan: when the last rank has arrived, every rank waits the algorithm's latency and then
// posts its own flows (one actor holding them all would cost O(flows^2) in SimGrid's bookkeeping); every rank
// leaves when the last flow has arrived.
struct CollectiveRun {
  const model::CollectiveSchedule* schedule = nullptr;
  std::vector<std::vector<size_t>> flows_of_rank;    // indices into schedule->flows, by sender
  std::vector<std::vector<size_t>> flows_into_rank;  // and by receiver
  size_t arrived = 0;  // actors take turns (SimGrid never preempts one): a plain count is safe
  sg4::SemaphorePtr all_here = sg4::Semaphore::create(0);
  sg4::BarrierPtr done;
};

class Replayer {
 public:
  const model::DecodeModel& model;
  const model::DecodePlan& plan;
  const std::vector<model::CollectiveSchedule>& schedules;
  Degradation degradation_;  // before the platform, which keeps a pointer to it
  SimulatedPlatform platform;
  std::map<std::pair<int, int>, Channel> channels;
  std::vector<Outbox> outboxes;
  std::vector<CollectiveRun> collectives;
  std::vector<double> finish;
  RankAccounts accounts;
  std::vector<double> phase_s;    // per rank, per phase: time from its start to its end on that rank
  RingSteadyState steady;
  PhaseSteps phase_steps;
  std::string failure;  // the first exception inside an actor (one escaping would abort SimGrid)
  double transfers = 0;  // simulated point-to-point transfers (sends and collective flows)

  Replayer(const model::DecodeModel& m, const model::DecodePlan& p, const std::vector<model::CollectiveSchedule>& s,
           const ReplayOptions& options);

  void note(const Activity& activity) { accounts.note(activity); }

  Channel& channel(int from, int to) { return channels[{from, to}]; }
  sg4::Host* host(int rank) { return platform.host(plan.gpus[static_cast<size_t>(rank)]); }
  static double now() { return sg4::Engine::get_clock(); }

  double compute_s(int rank, const model::Step& step) const { return kernel_time_s(model, plan, degradation_, rank, step); }

  template <typename Body>
  void guarded(Body body) {
    try {
      body();
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  }

  // A rank's own transfer moved bytes over [start, end] (collective flows are the collective's time, not this).
  void busy_sending(int rank, double start_s, double end_s) { accounts.busy_sending(rank, start_s, end_s); }

  // Before a send of a new phase: everything the rank sent before has arrived.
  void drain(int rank, int phase);

  // A ring send: queued on its channel, whose daemon sends it while the rank computes.
  void send(int from, int to, double bytes, int phase);

  // The sends of a transfers phase: an actor of their own (for this phase only; a daemon per channel would
  // hold 32k stacks for a 16k-GPU tree-lse) posts each after its own latency, all under way at once.
  void send_all(int rank, std::vector<model::Step> sends);

  // The sending end of one channel: runs for the whole replay (a daemon, ended when the ranks are done). Its
  // mailbox's permanent receiver is the receiving rank: a transfer starts as soon as it is posted and waits,
  // done, until the rank asks for it.
  void start_channel(int from, int to, Channel& path);

  // A rank's own flows of a collective, out and in: posted together, sharing links with everyone else's.
  void post_flows(int rank, const CollectiveRun& collective, int phase);

  void run_collective(int rank, CollectiveRun& collective, int phase);

  void run_step(int rank, const model::Step& step, size_t& next_collective);

  // Going straight to the last round: the skipped rounds' time counts as they would have (equal blocks: each
  // round the same attention; the rest of the period waiting for the block from the previous rank).
  void skip_rounds(int rank, int round, double last_round_s);

  // The ring's rounds one at a time (never all p x 3 steps at once); in its steady state, straight to the last
  // round at the time the rank would reach it (ring_steady.hpp).
  void run_ring(int rank, size_t phase, size_t& next_collective);

  void run_rank(int rank);

  // One phase on one rank: its sends go at once (their own actor), then its other steps in order.
  void run_phase(int rank, size_t phase, std::vector<model::Step>& steps, size_t& next_collective);

  // The transfer count, finish times, the last rank's times, then 6 numbers per activity (rank, kind, start,
  // end, peer, phase).
  std::vector<double> run();
};

}  // namespace treering::sim::detail
