#include "treering/sim/replay.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>

#include "platform.hpp"

namespace treering::sim {
namespace {

namespace sg4 = simgrid::s4u;

// One direction between two ranks: a daemon actor moves its queued sends one at a time, in order; receives
// count what has arrived.
struct Channel {
  std::deque<double> queued_bytes;
  sg4::SemaphorePtr queued = sg4::Semaphore::create(0);
  sg4::SemaphorePtr arrived = sg4::Semaphore::create(0);
};

// A rank's sends: those of a later phase wait until the earlier ones have arrived (its port takes them in the
// plan's order; within a phase they go at once and share it).
struct Outbox {
  int last_phase = -1;
  long long issued = 0;
  long long confirmed = 0;
  sg4::SemaphorePtr delivered = sg4::Semaphore::create(0);
};

// One collective of the plan: every rank arrives, one of them (the last) plays the algorithm's latency and then
// all of its flows at once, and every rank leaves when the last flow has arrived.
struct CollectiveRun {
  const model::CollectiveSchedule* schedule = nullptr;
  size_t arrived = 0;  // actors take turns (SimGrid never preempts one): a plain count is safe
  sg4::BarrierPtr done;
};

struct Replay {
  const model::DecodeModel& model;
  const model::DecodePlan& plan;
  const std::vector<model::CollectiveSchedule>& schedules;
  SimulatedPlatform platform;
  std::map<std::pair<int, int>, Channel> channels;
  std::vector<Outbox> outboxes;
  std::vector<CollectiveRun> collectives;
  std::vector<double> finish;
  std::vector<Activity> activities;
  bool record = false;
  std::string failure;  // the first exception inside an actor (one escaping would abort SimGrid)

  Replay(const model::DecodeModel& m, const model::DecodePlan& p, const std::vector<model::CollectiveSchedule>& s,
         bool record_activities)
      : model(m), plan(p), schedules(s), platform(m.topology()), outboxes(p.gpus.size()), finish(p.gpus.size(), -1.0),
        record(record_activities) {
    const auto ranks = static_cast<unsigned>(p.gpus.size());
    for (const model::CollectiveSchedule& schedule : schedules) {
      collectives.push_back({&schedule, 0, sg4::Barrier::create(ranks)});
    }
  }

  void note(const Activity& activity) {
    if (record) activities.push_back(activity);
  }

  Channel& channel(int from, int to) { return channels[{from, to}]; }
  sg4::Host* host(int rank) { return platform.host(plan.gpus[static_cast<size_t>(rank)]); }
  static double now() { return sg4::Engine::get_clock(); }

  double compute_s(int rank, const model::Step& step) const {
    if (step.attention && step.flops == 0) return 0.0;  // an empty shard runs no kernel
    const model::ComputeRates& rates = step.attention ? model.rates(rank) : model.slowest_rates();
    return rates.launch_s + std::max(step.bytes / rates.hbm_Bps, step.flops / rates.peak_flops);
  }

  template <typename Body>
  void guarded(Body body) {
    try {
      body();
    } catch (const std::exception& error) {
      if (failure.empty()) failure = error.what();
    }
  }

  void send(int from, int to, double bytes, int phase) {
    Outbox& outbox = outboxes[static_cast<size_t>(from)];
    if (phase != outbox.last_phase) {
      for (; outbox.confirmed < outbox.issued; ++outbox.confirmed) outbox.delivered->acquire();
      outbox.last_phase = phase;
    }
    ++outbox.issued;
    Channel& path = channel(from, to);
    path.queued_bytes.push_back(bytes);
    path.queued->release();
  }

  // The sender of one channel: runs for the whole replay (a daemon, ended when the ranks are done).
  void start_sender(int from, int to, Channel& path) {
    sg4::ActorPtr sender = sg4::Actor::create("send", host(from), [this, from, to, &path] {
      guarded([&] {
        const double latency_s = model.p2p(from, to).latency_s;
        while (true) {
          path.queued->acquire();
          const double bytes = path.queued_bytes.front();
          path.queued_bytes.pop_front();
          sg4::this_actor::sleep_for(latency_s);
          const double start = now();
          sg4::Comm::sendto(host(from), host(to), simulated_size(bytes));
          note({from, ActivityKind::send, start, now(), to});
          path.arrived->release();
          outboxes[static_cast<size_t>(from)].delivered->release();
        }
      });
    });
    sender->daemonize();
  }

  // The collective's flows start together after its latency; sharing decides when each arrives.
  void conduct(const model::CollectiveSchedule& schedule) {
    sg4::this_actor::sleep_for(schedule.chosen.latency_s);
    const double start = now();
    std::vector<sg4::CommPtr> comms;
    comms.reserve(schedule.flows.size());
    for (const model::CollectiveFlow& flow : schedule.flows) {
      comms.push_back(sg4::Comm::sendto_async(host(flow.from), host(flow.to), simulated_size(flow.wire_bytes)));
    }
    if (!record) return sg4::Comm::wait_all(comms);
    std::vector<size_t> flow_of(comms.size());
    for (size_t i = 0; i < flow_of.size(); ++i) flow_of[i] = i;
    while (!comms.empty()) {  // one send span per flow, ending when it arrives
      const auto i = static_cast<size_t>(sg4::Comm::wait_any(comms));
      const model::CollectiveFlow& flow = schedule.flows[flow_of[i]];
      note({flow.from, ActivityKind::send, start, now(), flow.to});
      comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(i));
      flow_of.erase(flow_of.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  void run_collective(int rank, CollectiveRun& collective) {
    const double start = now();
    if (++collective.arrived == plan.gpus.size()) conduct(*collective.schedule);  // the last to arrive
    collective.done->wait();
    note({rank, ActivityKind::collective, start, now(), -1});
  }

  void run_rank(int rank) {
    size_t next_collective = 0;
    for (const model::Step& step : model::steps_of(plan, rank)) {
      const double start = now();
      switch (step.kind) {
        case model::StepKind::compute:
          sg4::this_actor::sleep_for(compute_s(rank, step));
          if (now() > start) note({rank, ActivityKind::compute, start, now(), -1});
          break;
        case model::StepKind::send: send(rank, step.peer, step.bytes, step.phase); break;
        case model::StepKind::receive:
          channel(step.peer, rank).arrived->acquire();
          if (now() > start) note({rank, ActivityKind::wait, start, now(), step.peer});
          break;
        case model::StepKind::collective: run_collective(rank, collectives.at(next_collective++)); break;
      }
    }
    finish[static_cast<size_t>(rank)] = now();
  }

  // Finish times, then 5 numbers per activity (rank, kind, start, end, peer).
  std::vector<double> run() {
    for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
      for (const model::Step& step : model::steps_of(plan, rank)) {  // every channel and its sender first
        if (step.kind == model::StepKind::send && !channels.count({rank, step.peer})) {
          start_sender(rank, step.peer, channel(rank, step.peer));
        }
      }
    }
    for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
      sg4::Actor::create("rank" + std::to_string(rank), host(rank), [this, rank] { guarded([&] { run_rank(rank); }); });
    }
    platform.run();
    if (!failure.empty()) throw std::runtime_error(failure);
    std::string stuck;
    for (size_t rank = 0; rank < finish.size(); ++rank) {
      if (finish[rank] < 0) stuck += (stuck.empty() ? "" : ", ") + std::to_string(plan.gpus[rank]);
    }
    if (!stuck.empty()) throw std::runtime_error("deadlock: GPUs " + stuck + " never finished (waiting to receive)");
    std::vector<double> values = finish;
    for (const Activity& a : activities) {
      values.insert(values.end(), {double(a.rank), double(static_cast<int>(a.kind)), a.start_s, a.end_s, double(a.peer)});
    }
    return values;
  }
};

}  // namespace

namespace {

void count_link_bytes(const topologies::Topology& topology, const model::DecodePlan& plan, int from_rank, int to_rank,
                      double bytes, std::vector<double>& link_bytes) {
  for (topologies::LinkId id : topology.route(plan.gpus[static_cast<size_t>(from_rank)], plan.gpus[static_cast<size_t>(to_rank)]).links) {
    link_bytes[static_cast<size_t>(id)] += bytes;
  }
}

}  // namespace

ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, bool record_activities) {
  ReplayResult result;
  const topologies::Topology& topology = model.topology();
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  std::vector<model::CollectiveSchedule> schedules;
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind != model::PhaseKind::collective) continue;
    schedules.push_back(model.collective_schedule(phase));
    for (const model::CollectiveFlow& flow : schedules.back().flows) {
      count_link_bytes(topology, plan, flow.from, flow.to, flow.bytes, result.link_bytes);
    }
  }
  for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
    for (const model::Step& step : model::steps_of(plan, rank)) {
      if (step.kind == model::StepKind::send) count_link_bytes(topology, plan, rank, step.peer, step.bytes, result.link_bytes);
    }
  }
  const std::vector<double> values =
      run_in_child([&] { return Replay(model, plan, schedules, record_activities).run(); });
  const size_t ranks = plan.gpus.size();
  if (values.size() < ranks || (values.size() - ranks) % 5 != 0) throw std::runtime_error("simulator: truncated results");
  result.rank_finish_s.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(ranks));
  for (size_t i = ranks; i < values.size(); i += 5) {
    result.activities.push_back({static_cast<int>(values[i]), static_cast<ActivityKind>(static_cast<int>(values[i + 1])),
                                 values[i + 2], values[i + 3], static_cast<int>(values[i + 4])});
  }
  result.latency_s = *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  return result;
}

}  // namespace treering::sim
