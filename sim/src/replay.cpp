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

struct Replay {
  const model::DecodeModel& model;
  const model::DecodePlan& plan;
  SimulatedPlatform platform;
  std::map<std::pair<int, int>, Channel> channels;
  std::vector<double> finish;
  std::vector<Activity> activities;
  bool record = false;
  std::string failure;  // the first exception inside an actor (one escaping would abort SimGrid)

  Replay(const model::DecodeModel& m, const model::DecodePlan& p, bool record_activities)
      : model(m), plan(p), platform(m.topology()), finish(p.gpus.size(), -1.0), record(record_activities) {}

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

  void send(int from, int to, double bytes) {
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
          sg4::Comm::sendto(host(from), host(to), static_cast<uint64_t>(std::llround(bytes)));
          note({from, ActivityKind::send, start, now(), to});
          path.arrived->release();
        }
      });
    });
    sender->daemonize();
  }

  void run_rank(int rank) {
    for (const model::Step& step : model::steps_of(plan, rank)) {
      const double start = now();
      switch (step.kind) {
        case model::StepKind::compute:
          sg4::this_actor::sleep_for(compute_s(rank, step));
          if (now() > start) note({rank, ActivityKind::compute, start, now(), -1});
          break;
        case model::StepKind::send: send(rank, step.peer, step.bytes); break;
        case model::StepKind::receive:
          channel(step.peer, rank).arrived->acquire();
          if (now() > start) note({rank, ActivityKind::wait, start, now(), step.peer});
          break;
        case model::StepKind::collective: break;  // refused before the run
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

ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, bool record_activities) {
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind == model::PhaseKind::collective) {
      throw std::invalid_argument(std::string("the simulator cannot replay ") + model::to_string(plan.algorithm) +
                                  " yet: its collectives are not decomposed into point-to-point steps");
    }
  }
  ReplayResult result;
  const topologies::Topology& topology = model.topology();
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
    for (const model::Step& step : model::steps_of(plan, rank)) {
      if (step.kind != model::StepKind::send) continue;
      for (topologies::LinkId id : topology.route(plan.gpus[static_cast<size_t>(rank)],
                                                  plan.gpus[static_cast<size_t>(step.peer)]).links) {
        result.link_bytes[static_cast<size_t>(id)] += step.bytes;
      }
    }
  }
  const std::vector<double> values = run_in_child([&] { return Replay(model, plan, record_activities).run(); });
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
