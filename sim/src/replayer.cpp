// The replay's rank actors, ring channels and per-phase senders (replayer.hpp).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "plan_traffic.hpp"
#include "replayer.hpp"

namespace treering::sim::detail {

int token = 0;

sg4::Mailbox* mailbox(char kind, int from, int to) {
  char name[32];
  std::snprintf(name, sizeof name, "%c%d>%d", kind, from, to);
  return sg4::Mailbox::by_name(name);
}

sg4::CommPtr capped(sg4::CommPtr comm, double cap_Bps) {
  if (cap_Bps > 0) comm->set_rate(cap_Bps * kSizeUnitsPerByte);
  return comm;
}

Replayer::Replayer(const model::DecodeModel& m, const model::DecodePlan& p, const std::vector<model::CollectiveSchedule>& s,
       const ReplayOptions& options)
    : model(m), plan(p), schedules(s), degradation_(options.degradation), platform(m.topology(), &degradation_), outboxes(p.gpus.size()), finish(p.gpus.size(), -1.0),
      accounts(m, p.gpus.size(), options.record_activities), phase_s(p.gpus.size() * p.phases.size(), 0.0),
      steady(static_cast<int>(p.gpus.size()), static_cast<int>(p.gpus.size()), skips_steady_rounds(p, options)), phase_steps(p) {
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

void Replayer::drain(int rank, int phase) {
  Outbox& outbox = outboxes[static_cast<size_t>(rank)];
  if (phase == outbox.last_phase) return;
  for (; outbox.confirmed < outbox.issued; ++outbox.confirmed) outbox.delivered->acquire();
  outbox.last_phase = phase;
}

void Replayer::send(int from, int to, double bytes, int phase) {
  drain(from, phase);
  ++outboxes[static_cast<size_t>(from)].issued;
  Channel& path = channel(from, to);
  path.queued_bytes.push_back(bytes);
  path.queued->release();
}

void Replayer::send_all(int rank, std::vector<model::Step> sends) {
  if (sends.empty()) return;
  drain(rank, sends.front().phase);
  outboxes[static_cast<size_t>(rank)].issued += static_cast<long long>(sends.size());
  const std::vector<double> unsorted_s = group_latencies_s(model, rank, sends);
  std::vector<model::Step> in_order;
  std::vector<double> latencies_s;
  for (size_t i : by_latency(unsorted_s)) in_order.push_back(sends[i]), latencies_s.push_back(unsorted_s[i]);
  sg4::Actor::create("send", host(rank), [this, rank, sends = std::move(in_order), latencies_s = std::move(latencies_s)] {
    guarded([&] {
      const double start = now();
      std::vector<sg4::CommPtr> comms;
      for (size_t i = 0; i < sends.size(); ++i) {
        const model::Step& step = sends[i];
        const model::DecodeModel::PairCost& cost = model.p2p(rank, step.peer);
        sg4::this_actor::sleep_until(start + latencies_s[i]);
        comms.push_back(capped(mailbox('p', rank, step.peer)->put_init(&token, simulated_size(step.bytes * cost.size_factor(step.bytes))),
                               cost.rate_cap_Bps(step.bytes))->start());
        ++transfers;
      }
      double first_s = now();
      for (size_t i = 0; i < comms.size(); ++i) {
        comms[i]->wait();
        first_s = std::min(first_s, comms[i]->get_start_time());
        note({rank, ActivityKind::send, comms[i]->get_start_time(), comms[i]->get_finish_time(), sends[i].peer,
              sends[i].phase});
        outboxes[static_cast<size_t>(rank)].delivered->release();
      }
      busy_sending(rank, first_s, now());  // together: from the first start to the last arrival
    });
  });
}

void Replayer::start_channel(int from, int to, Channel& path) {
  sg4::Mailbox* box = mailbox('p', from, to);
  sg4::Actor::create("send", host(from), [this, from, to, &path, box] {
    guarded([&] {
      const model::DecodeModel::PairCost& cost = model.p2p(from, to);
      while (true) {
        path.queued->acquire();
        const double bytes = path.queued_bytes.front();
        path.queued_bytes.pop_front();
        sg4::this_actor::sleep_for(plan.ring_exchanges_per_step * cost.at(bytes).latency_s);  // one per exchange
        const double start = now();
        ++transfers;
        capped(box->put_init(&token, simulated_size(bytes * cost.size_factor(bytes))), cost.rate_cap_Bps(bytes))->start()->wait();
        note({from, ActivityKind::send, start, now(), to});
        busy_sending(from, start, now());
        outboxes[static_cast<size_t>(from)].delivered->release();
      }
    });
  })->daemonize();
}

void Replayer::run_step(int rank, const model::Step& step, size_t& next_collective) {
  const double start = now();
  switch (step.kind) {
    case model::StepKind::compute: {
      const double duration_s = compute_s(rank, step);
      accounts.kernel(rank, start, start + duration_s);
      sg4::this_actor::sleep_for(duration_s);
      if (now() > start) note({rank, ActivityKind::compute, start, now(), -1, step.phase});
      break;
    }
    case model::StepKind::send: {
      send(rank, step.peer, step.bytes, step.phase);
      if (step.overlaps_next) break;
      Outbox& outbox = outboxes[static_cast<size_t>(rank)];  // the rank copies the block itself: wait for it
      for (; outbox.confirmed < outbox.issued; ++outbox.confirmed) outbox.delivered->acquire();
      if (now() > start) note({rank, ActivityKind::wait, start, now(), step.peer, step.phase});
      break;
    }
    case model::StepKind::receive:
      mailbox('p', step.peer, rank)->get<int>();
      if (now() > start) note({rank, ActivityKind::wait, start, now(), step.peer, step.phase});
      break;
    case model::StepKind::collective:
      if (plan.collective_call_s > 0) sg4::this_actor::sleep_for(plan.collective_call_s);  // the host's call
      run_collective(rank, collectives.at(next_collective++), step.phase);
      break;
  }
}

void Replayer::skip_rounds(int rank, int round, double last_round_s) {
  book_skipped_rounds(accounts, model, plan, degradation_, rank, round, now(), last_round_s);
  sg4::this_actor::sleep_until(last_round_s);
}

void Replayer::run_ring(int rank, size_t phase, size_t& next_collective) {
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

void Replayer::run_rank(int rank) {
  size_t next_collective = 0;
  std::vector<model::Step> steps;
  for (size_t phase = 0; phase < plan.phases.size(); ++phase) {
    const double start = now();
    run_phase(rank, phase, steps, next_collective);
    phase_s[static_cast<size_t>(rank) * plan.phases.size() + phase] = now() - start;
  }
  finish[static_cast<size_t>(rank)] = now();
}

void Replayer::run_phase(int rank, size_t phase, std::vector<model::Step>& steps, size_t& next_collective) {
  const model::PhaseKind kind = plan.phases[phase].kind;
  if (is_ring_phase(kind)) return run_ring(rank, phase, next_collective);
  steps.clear();
  phase_steps.append(rank, phase, steps);
  std::vector<model::Step> sends;
  for (const model::Step& step : steps) {
    if (step.kind == model::StepKind::send) sends.push_back(step);
  }
  send_all(rank, std::move(sends));
  for (const model::Step& step : steps) {
    if (step.kind != model::StepKind::send) run_step(rank, step, next_collective);
  }
}

std::vector<double> Replayer::run() {
  std::vector<sg4::ActorPtr> rank_actors;
  for (int rank = 0; rank < static_cast<int>(plan.gpus.size()); ++rank) {
    rank_actors.push_back(sg4::Actor::create("rank" + std::to_string(rank), host(rank),
                                             [this, rank] { guarded([&] { run_rank(rank); }); }));
  }
  bool ring = false;
  for (const model::Phase& phase : plan.phases) {
    ring = ring || is_ring_phase(phase.kind);
  }
  for (const auto& [pair, bytes] : point_to_point_bytes(plan)) {  // receivers; the ring's channel daemons
    mailbox('p', pair.first, pair.second)->set_receiver(rank_actors[static_cast<size_t>(pair.second)]);
    if (ring) start_channel(pair.first, pair.second, channel(pair.first, pair.second));
  }
  platform.run();
  if (!failure.empty()) throw std::runtime_error(failure);
  return replay_values(transfers, finish, accounts, phase_s, plan);
}
}  // namespace treering::sim::detail
