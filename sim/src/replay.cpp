#include "treering/sim/replay.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "plan_traffic.hpp"
#include "platform.hpp"
#include "ring_steady.hpp"

namespace treering::sim {
namespace {

namespace sg4 = simgrid::s4u;

// Transfers go through mailboxes between a sending and a receiving actor: SimGrid 3.32 keeps every detached
// transfer (Comm::sendto) in one list and removes each finished one by a linear search, O(transfers in flight)
// each, which made a 1,024-GPU ring quadratic; mailbox transfers are only on their two actors' lists.
int token = 0;  // the payload every transfer carries (the bytes are simulated)

sg4::Mailbox* mailbox(char kind, int from, int to) {
  char name[32];
  std::snprintf(name, sizeof name, "%c%d>%d", kind, from, to);
  return sg4::Mailbox::by_name(name);
}

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

// Every rank holds the same number of tokens (more than none): the ring's rounds are all alike.
bool equal_blocks(const model::DecodePlan& plan) {
  for (const model::Shard& shard : plan.shards) {
    if (shard.count != plan.shards.front().count || shard.count == 0) return false;
  }
  return true;
}

struct Replay {
  const model::DecodeModel& model;
  const model::DecodePlan& plan;
  const std::vector<model::CollectiveSchedule>& schedules;
  SimulatedPlatform platform;
  std::map<std::pair<int, int>, Channel> channels;
  std::vector<Outbox> outboxes;
  std::vector<CollectiveRun> collectives;
  std::vector<double> finish;
  std::vector<RankTimes> totals;  // per rank
  std::vector<std::pair<double, double>> last_send;  // per rank: its last transfer's duration, and under compute
  std::vector<std::array<std::pair<double, double>, 2>> recent_compute;  // per rank: its last two kernels
  std::vector<double> phase_s;    // per rank, per phase: time from its start to its end on that rank
  std::vector<Activity> activities;
  bool record = false;
  RingSteadyState steady;
  std::string failure;  // the first exception inside an actor (one escaping would abort SimGrid)
  double transfers = 0;  // simulated point-to-point transfers (sends and collective flows)

  Replay(const model::DecodeModel& m, const model::DecodePlan& p, const std::vector<model::CollectiveSchedule>& s,
         const ReplayOptions& options)
      : model(m), plan(p), schedules(s), platform(m.topology()), outboxes(p.gpus.size()), finish(p.gpus.size(), -1.0),
        totals(p.gpus.size()), last_send(p.gpus.size()), recent_compute(p.gpus.size()), phase_s(p.gpus.size() * p.phases.size(), 0.0),
        record(options.record_activities),
        steady(static_cast<int>(p.gpus.size()), static_cast<int>(p.gpus.size()),
               options.skip_steady_rounds && !options.record_activities && equal_blocks(p)) {
    const auto ranks = static_cast<unsigned>(p.gpus.size());
    for (const model::CollectiveSchedule& schedule : schedules) {
      CollectiveRun run{&schedule, std::vector<std::vector<size_t>>(ranks), std::vector<std::vector<size_t>>(ranks), 0,
                        sg4::Semaphore::create(0), sg4::Barrier::create(ranks)};
      for (size_t i = 0; i < schedule.flows.size(); ++i) {
        run.flows_of_rank[static_cast<size_t>(schedule.flows[i].from)].push_back(i);
        run.flows_into_rank[static_cast<size_t>(schedule.flows[i].to)].push_back(i);
      }
      collectives.push_back(std::move(run));
    }
  }

  void note(const Activity& activity) {
    RankTimes& t = totals[static_cast<size_t>(activity.rank)];
    const double span_s = activity.end_s - activity.start_s;
    switch (activity.kind) {
      case ActivityKind::compute: t.compute_s += span_s; break;
      case ActivityKind::send: break;  // counted where sends are known not to overlap (busy_sending)
      case ActivityKind::wait: (model.crosses_domains(activity.peer, activity.rank) ? t.wait_inter_s : t.wait_intra_s) += span_s; break;
      case ActivityKind::collective: t.collective_s += span_s; break;
    }
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

  // A rank's own transfer moved bytes over [start, end] (collective flows are the collective's time, not
  // this): how long, and how much of it ran under the rank's compute (its last two kernels: a ring send runs
  // beside its round's attention and, when slow, the next round's).
  void busy_sending(int rank, double start_s, double end_s) {
    RankTimes& t = totals[static_cast<size_t>(rank)];
    double hidden_s = 0;
    for (const auto& [from_s, to_s] : recent_compute[static_cast<size_t>(rank)]) {
      hidden_s += std::max(0.0, std::min(end_s, to_s) - std::max(start_s, from_s));
    }
    t.send_s += end_s - start_s;
    t.overlapped_s += hidden_s;
    last_send[static_cast<size_t>(rank)] = {end_s - start_s, hidden_s};
  }

  // Before a send of a new phase: everything the rank sent before has arrived.
  void drain(int rank, int phase) {
    Outbox& outbox = outboxes[static_cast<size_t>(rank)];
    if (phase == outbox.last_phase) return;
    for (; outbox.confirmed < outbox.issued; ++outbox.confirmed) outbox.delivered->acquire();
    outbox.last_phase = phase;
  }

  // A ring send: queued on its channel, whose daemon sends it while the rank computes.
  void send(int from, int to, double bytes, int phase) {
    drain(from, phase);
    ++outboxes[static_cast<size_t>(from)].issued;
    Channel& path = channel(from, to);
    path.queued_bytes.push_back(bytes);
    path.queued->release();
  }

  // The sends of a transfers phase: an actor of their own (for this phase only; a daemon per channel would
  // hold 32k stacks for a 16k-GPU tree-lse) posts each after its own latency, all under way at once.
  void send_all(int rank, std::vector<model::Step> sends) {
    if (sends.empty()) return;
    drain(rank, sends.front().phase);
    outboxes[static_cast<size_t>(rank)].issued += static_cast<long long>(sends.size());
    std::stable_sort(sends.begin(), sends.end(), [&](const model::Step& a, const model::Step& b) {
      return model.p2p(rank, a.peer).latency_s < model.p2p(rank, b.peer).latency_s;
    });
    sg4::Actor::create("send", host(rank), [this, rank, sends = std::move(sends)] {
      guarded([&] {
        const double start = now();
        std::vector<sg4::CommPtr> comms;
        for (const model::Step& step : sends) {
          sg4::this_actor::sleep_until(start + model.p2p(rank, step.peer).latency_s);
          comms.push_back(mailbox('p', rank, step.peer)->put_async(&token, simulated_size(step.bytes)));
          ++transfers;
        }
        double first_s = now();
        for (size_t i = 0; i < comms.size(); ++i) {
          comms[i]->wait();
          first_s = std::min(first_s, comms[i]->get_start_time());
          note({rank, ActivityKind::send, comms[i]->get_start_time(), comms[i]->get_finish_time(), sends[i].peer});
          outboxes[static_cast<size_t>(rank)].delivered->release();
        }
        busy_sending(rank, first_s, now());  // together: from the first start to the last arrival
      });
    });
  }

  // The sending end of one channel: runs for the whole replay (a daemon, ended when the ranks are done). Its
  // mailbox's permanent receiver is the receiving rank: a transfer starts as soon as it is posted and waits,
  // done, until the rank asks for it.
  void start_channel(int from, int to, Channel& path) {
    sg4::Mailbox* box = mailbox('p', from, to);
    sg4::Actor::create("send", host(from), [this, from, to, &path, box] {
      guarded([&] {
        const double latency_s = model.p2p(from, to).latency_s;
        while (true) {
          path.queued->acquire();
          const double bytes = path.queued_bytes.front();
          path.queued_bytes.pop_front();
          sg4::this_actor::sleep_for(latency_s);
          const double start = now();
          ++transfers;
          box->put(&token, simulated_size(bytes));
          note({from, ActivityKind::send, start, now(), to});
          busy_sending(from, start, now());
          outboxes[static_cast<size_t>(from)].delivered->release();
        }
      });
    })->daemonize();
  }

  // A rank's own flows of a collective, out and in: posted together, sharing links with everyone else's.
  void post_flows(int rank, const CollectiveRun& collective) {
    std::vector<sg4::CommPtr> comms;
    std::vector<size_t> sent_flow;  // for sends: the flow; receives: none
    for (size_t i : collective.flows_of_rank[static_cast<size_t>(rank)]) {
      const model::CollectiveFlow& flow = collective.schedule->flows[i];
      comms.push_back(mailbox('c', flow.from, flow.to)->put_async(&token, simulated_size(flow.wire_bytes)));
      ++transfers;
      sent_flow.push_back(i);
    }
    const std::vector<size_t>& incoming = collective.flows_into_rank[static_cast<size_t>(rank)];
    std::vector<int*> received(incoming.size());  // where each receive puts its payload pointer
    for (size_t j = 0; j < incoming.size(); ++j) {
      const model::CollectiveFlow& flow = collective.schedule->flows[incoming[j]];
      comms.push_back(mailbox('c', flow.from, flow.to)->get_async<int>(&received[j]));
      sent_flow.push_back(SIZE_MAX);
    }
    for (size_t i = 0; i < comms.size(); ++i) {  // one send span per flow, ending when it arrived
      comms[i]->wait();
      if (sent_flow[i] == SIZE_MAX) continue;
      const model::CollectiveFlow& flow = collective.schedule->flows[sent_flow[i]];
      note({flow.from, ActivityKind::send, comms[i]->get_start_time(), comms[i]->get_finish_time(), flow.to});
    }
  }

  void run_collective(int rank, CollectiveRun& collective) {
    const double start = now();
    if (++collective.arrived == plan.gpus.size()) {  // the last to arrive lets the others go
      for (size_t other = 1; other < plan.gpus.size(); ++other) collective.all_here->release();
    } else {
      collective.all_here->acquire();
    }
    sg4::this_actor::sleep_for(collective.schedule->chosen.latency_s);
    post_flows(rank, collective);
    collective.done->wait();
    note({rank, ActivityKind::collective, start, now(), -1});
  }

  void run_step(int rank, const model::Step& step, size_t& next_collective) {
    const double start = now();
    switch (step.kind) {
      case model::StepKind::compute: {
        const double duration_s = compute_s(rank, step);
        auto& recent = recent_compute[static_cast<size_t>(rank)];
        recent = {recent[1], {start, start + duration_s}};
        sg4::this_actor::sleep_for(duration_s);
        if (now() > start) note({rank, ActivityKind::compute, start, now(), -1});
        break;
      }
      case model::StepKind::send: send(rank, step.peer, step.bytes, step.phase); break;
      case model::StepKind::receive:
        mailbox('p', step.peer, rank)->get<int>();
        if (now() > start) note({rank, ActivityKind::wait, start, now(), step.peer});
        break;
      case model::StepKind::collective: run_collective(rank, collectives.at(next_collective++)); break;
    }
  }

  // Going straight to the last round: the skipped rounds' time counts as they would have (equal blocks: each
  // round the same attention; the rest of the period waiting for the block from the previous rank).
  void skip_rounds(int rank, int round, double last_round_s) {
    std::vector<model::Step> steps;
    model::append_round_steps(plan, rank, round, steps);
    double attention_s = 0;
    for (const model::Step& step : steps) attention_s += step.kind == model::StepKind::compute ? compute_s(rank, step) : 0.0;
    const int skipped = static_cast<int>(plan.gpus.size()) - 1 - round;  // rounds round .. p-2, each with a send
    RankTimes& t = totals[static_cast<size_t>(rank)];
    const int previous = (rank - 1 + static_cast<int>(plan.gpus.size())) % static_cast<int>(plan.gpus.size());
    t.compute_s += skipped * attention_s;
    (model.crosses_domains(previous, rank) ? t.wait_inter_s : t.wait_intra_s) +=
        std::max(0.0, last_round_s - now() - skipped * attention_s);
    t.send_s += skipped * last_send[static_cast<size_t>(rank)].first;  // in the steady state all alike
    t.overlapped_s += skipped * last_send[static_cast<size_t>(rank)].second;
    sg4::this_actor::sleep_until(last_round_s);
  }

  // The ring's rounds one at a time (never all p x 3 steps at once); in its steady state, straight to the last
  // round at the time the rank would reach it (ring_steady.hpp).
  void run_ring(int rank, size_t phase, size_t& next_collective) {
    const int rounds = static_cast<int>(plan.gpus.size());
    std::vector<model::Step> steps;
    for (int round = 0; round < rounds; ++round) {
      if (const std::optional<double> last_round_s = steady.on_round_start(rank, round, now())) {
        if (*last_round_s < now() - 1e-12) throw std::logic_error("ring steady state: a rank is past its last round");
        skip_rounds(rank, round, *last_round_s);
        round = rounds - 1;
      }
      steps.clear();
      model::append_round_steps(plan, rank, round, steps);
      for (model::Step& step : steps) {
        step.phase = static_cast<int>(phase);
        run_step(rank, step, next_collective);
      }
    }
  }

  void run_rank(int rank) {
    size_t next_collective = 0;
    std::vector<model::Step> steps;
    for (size_t phase = 0; phase < plan.phases.size(); ++phase) {
      const double start = now();
      run_phase(rank, phase, steps, next_collective);
      phase_s[static_cast<size_t>(rank) * plan.phases.size() + phase] = now() - start;
    }
    finish[static_cast<size_t>(rank)] = now();
  }

  // One phase on one rank: its sends go at once (their own actor), then its other steps in order.
  void run_phase(int rank, size_t phase, std::vector<model::Step>& steps, size_t& next_collective) {
    if (plan.phases[phase].kind == model::PhaseKind::ring_pass) return run_ring(rank, phase, next_collective);
    steps.clear();
    model::append_phase_steps(plan, rank, phase, steps);
    std::vector<model::Step> sends;
    for (const model::Step& step : steps) {
      if (step.kind == model::StepKind::send) sends.push_back(step);
    }
    send_all(rank, std::move(sends));
    for (const model::Step& step : steps) {
      if (step.kind != model::StepKind::send) run_step(rank, step, next_collective);
    }
  }

  // The transfer count, finish times, then 5 numbers per activity (rank, kind, start, end, peer).
  std::vector<double> run() {
    std::vector<sg4::ActorPtr> rank_actors;
    for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
      rank_actors.push_back(sg4::Actor::create("rank" + std::to_string(rank), host(rank),
                                               [this, rank] { guarded([&] { run_rank(rank); }); }));
    }
    bool ring = false;
    for (const model::Phase& phase : plan.phases) ring = ring || phase.kind == model::PhaseKind::ring_pass;
    for (const auto& [pair, bytes] : point_to_point_bytes(plan)) {  // receivers; the ring's channel daemons
      mailbox('p', pair.first, pair.second)->set_receiver(rank_actors[static_cast<size_t>(pair.second)]);
      if (ring) start_channel(pair.first, pair.second, channel(pair.first, pair.second));
    }
    platform.run();
    if (!failure.empty()) throw std::runtime_error(failure);
    std::string stuck;
    for (size_t rank = 0; rank < finish.size(); ++rank) {
      if (finish[rank] < 0) stuck += (stuck.empty() ? "" : ", ") + std::to_string(plan.gpus[rank]);
    }
    if (!stuck.empty()) throw std::runtime_error("deadlock: GPUs " + stuck + " never finished (waiting to receive)");
    std::vector<double> values{transfers};
    values.insert(values.end(), finish.begin(), finish.end());
    const size_t critical = static_cast<size_t>(std::max_element(finish.begin(), finish.end()) - finish.begin());
    const RankTimes& t = totals[critical];
    values.insert(values.end(),
                  {double(critical), t.compute_s, t.wait_intra_s, t.wait_inter_s, t.collective_s, t.send_s, t.overlapped_s});
    values.insert(values.end(), phase_s.begin() + static_cast<std::ptrdiff_t>(critical * plan.phases.size()),
                  phase_s.begin() + static_cast<std::ptrdiff_t>((critical + 1) * plan.phases.size()));
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

ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options) {
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
  for (const auto& [pair, bytes] : point_to_point_bytes(plan)) {
    count_link_bytes(topology, plan, pair.first, pair.second, bytes, result.link_bytes);
  }
  const std::vector<double> values =
      run_in_child([&] { return Replay(model, plan, schedules, options).run(); });
  const size_t ranks = plan.gpus.size();
  const size_t header = 1 + ranks + 7 + plan.phases.size();
  if (values.size() < header || (values.size() - header) % 5 != 0) throw std::runtime_error("simulator: truncated results");
  result.transfers_simulated = static_cast<long long>(values.front());
  result.rank_finish_s.assign(values.begin() + 1, values.begin() + 1 + static_cast<std::ptrdiff_t>(ranks));
  const double* critical = values.data() + 1 + ranks;
  result.critical = {static_cast<int>(critical[0]), critical[1], critical[2], critical[3], critical[4], critical[5],
                     critical[6], std::vector<double>(critical + 7, critical + 7 + plan.phases.size())};
  for (size_t i = header; i < values.size(); i += 5) {
    result.activities.push_back({static_cast<int>(values[i]), static_cast<ActivityKind>(static_cast<int>(values[i + 1])),
                                 values[i + 2], values[i + 3], static_cast<int>(values[i + 4])});
  }
  result.latency_s = *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  return result;
}

}  // namespace treering::sim
