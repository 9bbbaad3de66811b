// The plan's event loop (plan_events.hpp): the ranks running their steps, and the loop itself.
#include "plan_events.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "plan_events_engine.hpp"
#include "simulated_units.hpp"

namespace treering::sim::detail {

bool plan_events_replay(const model::DecodePlan& plan) {
  for (const model::Phase& phase : plan.phases) {
    for (const model::Transfer& t : phase.sends) {
      if (!(t.bytes > 0)) return false;
    }
  }
  return true;
}

namespace {

std::vector<double> link_rates(const model::DecodeModel& model, const ReplayOptions& options) {
  const topologies::Topology& topology = model.topology();
  const model::LinkEfficiency efficiency = model::link_efficiency(topology);
  std::vector<double> units_per_s(static_cast<size_t>(topology.link_count()));
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
    units_per_s[static_cast<size_t>(id)] = link_units_per_s(topology, efficiency, &options.degradation, id);
  }
  return units_per_s;
}

}  // namespace

PlanEvents::PlanEvents(const model::DecodeModel& model, const model::DecodePlan& plan,
                       const std::vector<model::CollectiveSchedule>& schedules, const ReplayOptions& options)
    : model_(model), plan_(plan), options_(options),
      down_(options.degradation.cables_down.empty() ? nullptr : &options.degradation.cables_down),
      ranks_(static_cast<int>(plan.gpus.size())), accounts_(model, plan.gpus.size(), options.record_activities),
      links_(link_rates(model, options)), state_(plan.gpus.size()),
      steady_(ranks_, ranks_, skips_steady_rounds(plan, options)), phase_steps_(plan),
      finish_s_(plan.gpus.size(), -1.0), phase_s_(plan.gpus.size() * plan.phases.size(), 0.0) {
  size_t next = 0;
  for (size_t phase = 0; phase < plan.phases.size(); ++phase) {
    if (plan.phases[phase].kind != model::PhaseKind::collective) continue;
    collectives_.push_back(
        {&schedules.at(next++), static_cast<int>(phase), 0, std::vector<double>(plan.gpus.size()), 0});
  }
  channels_.reserve(plan.gpus.size());
}

bool PlanEvents::is_ring(size_t phase) const {
  return is_ring_phase(plan_.phases[phase].kind);
}

// The next steps of a rank: its ring's next round, or its next phase's (a transfers phase's sends apart: they
// leave together before its other steps); false when it has none left.
bool PlanEvents::load_steps(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  state.steps.clear();
  state.next = 0;
  while (state.phase < plan_.phases.size()) {
    if (is_ring(state.phase) && state.round + 1 < ranks_) {
      if (state.round < 0) state.phase_start_s = now_s_;
      ++state.round;
      if (const std::optional<double> last_round_s = steady_.on_round_start(rank, state.round, now_s_)) {
        if (*last_round_s < now_s_ - 1e-12) throw std::logic_error("ring steady state: a rank is past its last round");
        book_skipped_rounds(accounts_, model_, plan_, options_.degradation, rank, state.round, now_s_, *last_round_s);
        state.round = ranks_ - 1;
        state.skip_until_s = *last_round_s;
      }
      model::append_round_steps(plan_, rank, state.round, state.steps);
      for (model::Step& step : state.steps) step.phase = static_cast<int>(state.phase);
      return true;
    }
    if (!is_ring(state.phase) && state.round < 0) {
      state.phase_start_s = now_s_;
      state.round = ranks_;  // loaded
      phase_steps_.append(rank, state.phase, state.steps);
      auto not_send = [](const model::Step& s) { return s.kind != model::StepKind::send; };
      const auto first_send = std::stable_partition(state.steps.begin(), state.steps.end(), not_send);
      state.phase_sends.assign(first_send, state.steps.end());
      state.steps.erase(first_send, state.steps.end());
      if (!state.steps.empty() || !state.phase_sends.empty()) return true;
    }
    phase_s_[static_cast<size_t>(rank) * plan_.phases.size() + state.phase] = now_s_ - state.phase_start_s;
    ++state.phase;
    state.round = -1;
  }
  return false;
}

// A rank runs its steps until one makes it wait, or it is done.
void PlanEvents::run_rank(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  while (true) {
    if (state.skip_until_s >= 0) {  // SimGrid's sleep_until: no wait when it is now
      const double until_s = state.skip_until_s;
      state.skip_until_s = -1;
      if (until_s > now_s_) {
        state.wait = Wait::skip;
        schedule(until_s, EventKind::rank_wakes, rank);
        return;
      }
    }
    if (!state.phase_sends.empty() && !post_phase_sends(rank)) return;
    if (state.next == state.steps.size()) {
      if (load_steps(rank)) continue;
      state.done = true;
      finish_s_[static_cast<size_t>(rank)] = now_s_;
      return;
    }
    const model::Step& step = state.steps[state.next++];
    state.waiting_since_s = now_s_;
    state.waiting_step = &step;
    if (!run_step(rank, step)) return;
  }
}

bool PlanEvents::run_step(int rank, const model::Step& step) {
  RankState& state = state_[static_cast<size_t>(rank)];
  switch (step.kind) {
    case model::StepKind::compute: {
      const double duration_s = kernel_time_s(model_, plan_, options_.degradation, rank, step);
      accounts_.kernel(rank, now_s_, now_s_ + duration_s);
      if (!(duration_s > 0)) return true;  // SimGrid's sleep_for(0) does not wait either
      state.wait = Wait::kernel;
      schedule(now_s_ + duration_s, EventKind::rank_wakes, rank);
      return false;
    }
    case model::StepKind::send: {  // a ring's: its earlier phases' sends first, then onto the channel
      if (step.phase != state.last_send_phase && state.delivered < state.issued) {
        state.wait = Wait::drain;
        return false;
      }
      state.last_send_phase = step.phase;
      ++state.issued;
      RingChannel& path = channel(rank, step.peer);
      path.queued_bytes.push_back(step.bytes);
      if (!path.busy) start_block(path);
      if (step.overlaps_next || state.delivered == state.issued) return true;
      state.wait = Wait::delivery;
      return false;
    }
    case model::StepKind::receive: {
      PairQueue& queue = incoming(rank, step.peer);
      if (!queue.arrived.empty() && queue.arrived.front()) {
        queue.arrived.pop_front();
        ++queue.taken;
        return true;
      }
      state.wait = Wait::arrival;
      return false;
    }
    case model::StepKind::collective:
      if (plan_.collective_call_s > 0) {  // the host's call first
        state.wait = Wait::host_call;
        schedule(now_s_ + plan_.collective_call_s, EventKind::rank_wakes, rank);
      } else {
        arrive_at_collective(rank);
      }
      return false;
  }
  throw std::logic_error("plan replay: a step of no known kind");
}

// A rank's wait is over (at now_s_): its span booked, then on with its steps.
void PlanEvents::wake(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const Wait wait = state.wait;
  state.wait = Wait::none;
  const model::Step* step = state.waiting_step;
  switch (wait) {
    case Wait::kernel:
    case Wait::delivery:
    case Wait::arrival:
      if (now_s_ > state.waiting_since_s) {
        const bool kernel = wait == Wait::kernel;
        accounts_.note({rank, kernel ? ActivityKind::compute : ActivityKind::wait, state.waiting_since_s, now_s_,
                        kernel ? -1 : step->peer, step->phase});
      }
      break;
    case Wait::drain:  // a ring send goes on (its span from its start); a phase's sends are posted by run_rank
      if (!state.phase_sends.empty()) break;
      if (!run_step(rank, *step)) return;
      break;
    case Wait::host_call: arrive_at_collective(rank); return;
    case Wait::collective:
    case Wait::skip:
    case Wait::none: break;
  }
  run_rank(rank);
}

// A transfers phase's sends (SimGrid's send_all): once the rank's earlier sends have arrived, each leaves after
// its own latency, all under way together.
bool PlanEvents::post_phase_sends(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const int phase = state.phase_sends.front().phase;
  if (phase != state.last_send_phase && state.delivered < state.issued) {
    state.wait = Wait::drain;
    return false;
  }
  state.last_send_phase = phase;
  state.issued += static_cast<long long>(state.phase_sends.size());
  const std::vector<double> latencies_s = group_latencies_s(model_, rank, state.phase_sends);
  state.batch_left = static_cast<int>(state.phase_sends.size());
  state.batch_first_start_s = std::numeric_limits<double>::infinity();
  for (size_t i : by_latency(latencies_s)) {
    const model::Step& send = state.phase_sends[i];
    pending_sends_.push_back({rank, send.peer, send.phase, send.bytes});
    if (latencies_s[i] > 0) {
      schedule(now_s_ + latencies_s[i], EventKind::post_send, static_cast<int>(pending_sends_.size() - 1));
    } else {
      post_send(pending_sends_.back());
    }
  }
  state.phase_sends.clear();
  return true;
}

void PlanEvents::arrive_at_collective(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const size_t index = state.next_collective++;
  CollectiveState& collective = collectives_.at(index);
  collective.arrival_s[static_cast<size_t>(rank)] = now_s_;
  state.wait = Wait::collective;
  if (++collective.arrived < ranks_) return;
  const model::CollectiveCandidate& chosen = collective.schedule->chosen;
  // The step latencies, then the flows (capped at the model's rate where NCCL's limits make it slower than the
  // links: collective_flows.hpp).
  schedule(now_s_ + chosen.latency_s, EventKind::collective_starts, static_cast<int>(index));
}

void PlanEvents::handle(const Event& event) {
  switch (event.kind) {
    case EventKind::rank_wakes: wake(event.index); break;
    case EventKind::channel_latency_over: move_block(channels_[static_cast<size_t>(event.index)]); break;
    case EventKind::post_send: post_send(pending_sends_[static_cast<size_t>(event.index)]); break;
    case EventKind::transfer_done:
      if (links_.current(event.index, event.version)) transfer_arrived(event.index);
      break;
    case EventKind::collective_starts: start_flows(event.index); break;
  }
}

std::vector<double> PlanEvents::run() {
  std::vector<SharedLinks::Due> due;
  auto settle = [&] {
    due.clear();
    links_.settle(now_s_, due);
    for (const SharedLinks::Due& d : due) schedule(d.end_s, EventKind::transfer_done, d.id, d.version);
  };
  for (int rank = 0; rank < ranks_; ++rank) run_rank(rank);
  settle();
  std::vector<Event> instant;
  while (!events_.empty()) {
    now_s_ = events_.top().at_s;
    instant.clear();
    while (!events_.empty() && events_.top().at_s - now_s_ < kSameInstant_s) {
      instant.push_back(events_.top());
      events_.pop();
    }
    for (const Event& event : instant) handle(event);
    settle();
  }
  return replay_values(transfers_, finish_s_, accounts_, phase_s_, plan_);
}

std::vector<double> replay_plan_events(const model::DecodeModel& model, const model::DecodePlan& plan,
                                       const std::vector<model::CollectiveSchedule>& schedules,
                                       const ReplayOptions& options) {
  return PlanEvents(model, plan, schedules, options).run();
}

}  // namespace treering::sim::detail
