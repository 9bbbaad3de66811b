// The ranks' programs (rank_programs.hpp): every rank running its steps, stage by stage.
#include "rank_programs.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace treering::sim::detail {
namespace {

std::vector<int> domains_of(const ReplayRun& run) {
  std::vector<int> domains;
  for (int gpu : run.gpus()) domains.push_back(run.topology().domain_of_gpu(gpu));
  return domains;
}

// The ring's steady rounds are skipped when every rank of the run starts at stage 0 in a plan whose ring has
// equal blocks (every group the same number of rounds), asked for and with no timeline to record.
bool skips_steady(const ReplayRun& run, const ReplayOptions& options) {
  int rounds = -1;
  int covered = 0;
  for (const GroupRun& group : run.groups()) {
    if (group.stage != 0) continue;
    bool ring = false;
    for (const model::Phase& phase : group.plan->phases) ring = ring || is_ring_phase(phase.kind);
    if (!ring || !skips_steady_rounds(*group.plan, options)) return false;
    const int p = static_cast<int>(group.plan->gpus.size());
    if (rounds >= 0 && p != rounds) return false;
    rounds = p;
    covered += p;
  }
  return covered == run.ranks();
}

int stage_zero_rounds(const ReplayRun& run) {
  for (const GroupRun& group : run.groups()) {
    if (group.stage == 0) return static_cast<int>(group.plan->gpus.size());
  }
  return 0;
}

}  // namespace

RankPrograms::RankPrograms(const ReplayRun& run, const ReplayOptions& options, FlowNetwork& network)
    : run_(run),
      options_(options),
      network_(network),
      down_(options.degradation.cables_down.empty() ? nullptr : &options.degradation.cables_down),
      accounts_(domains_of(run), run.stages(), options.record_activities),
      state_(static_cast<size_t>(run.ranks())),
      steady_(run.ranks(), stage_zero_rounds(run), skips_steady(run, options)),
      finish_s_(static_cast<size_t>(run.ranks()), -1.0),
      stage_finish_s_(static_cast<size_t>(run.stages() * run.ranks()), -1.0),
      phase_offset_(static_cast<size_t>(run.stages() * run.ranks()), 0) {
  collective_of_.resize(run.groups().size());
  for (size_t g = 0; g < run.groups().size(); ++g) {
    const GroupRun& group = run.groups()[g];
    phase_steps_.emplace_back(*group.plan);
    size_t next = 0;
    for (size_t phase = 0; phase < group.plan->phases.size(); ++phase) {
      if (group.plan->phases[phase].kind != model::PhaseKind::collective) continue;
      collective_of_[g].push_back(collectives_.size());
      collectives_.push_back({static_cast<int>(g), &group.schedules.at(next++), static_cast<int>(phase), 0,
                              std::vector<double>(group.members.size()), 0});
    }
  }
  size_t offset = 0;  // each rank's phases, stage by stage
  for (int rank = 0; rank < run.ranks(); ++rank) {
    for (int stage = 0; stage < run.stages(); ++stage) {
      phase_offset_[static_cast<size_t>(stage * run.ranks() + rank)] = offset;
      const int group = run.group_at(rank, stage);
      if (group < 0) continue;
      const model::DecodePlan& plan = *run.group(group).plan;
      offset += plan.phases.size();
      for (const model::Phase& phase : plan.phases)
        work_total_ += is_ring_phase(phase.kind) ? static_cast<double>(plan.gpus.size()) : 1.0;
    }
  }
  phase_s_.assign(offset, 0.0);
  channels_.reserve(static_cast<size_t>(run.ranks()) * static_cast<size_t>(run.stages()));
  rings_alone_ = rings_alone();
  ring_entry_s_.resize(run.groups().size());
  ring_entered_.assign(run.groups().size(), 0);
}

// The progress callback hears the share done whenever another percent of the ranks' phases (a ring's rounds
// each counting as one) has been loaded.
void RankPrograms::count_work(double units) {
  work_done_ += units;
  if (!options_.progress || work_total_ <= 0 || work_done_ - work_told_ < 0.01 * work_total_) return;
  work_told_ = work_done_;
  options_.progress(std::min(1.0, work_done_ / work_total_));
}

// The rank moves on to its next stage with a plan after `from_stage` (-1: its first); false when none is left.
bool RankPrograms::enter_stage(int rank, int from_stage) {
  RankState& state = state_[static_cast<size_t>(rank)];
  for (int stage = from_stage + 1; stage < run_.stages(); ++stage) {
    const int group = run_.group_at(rank, stage);
    if (group < 0) continue;
    state.stage = stage;
    state.group = group;
    state.local = run_.local_at(rank, stage);
    state.phase = 0;
    state.round = -1;
    state.next_collective = 0;
    accounts_.set_stage(rank, stage);
    return true;
  }
  return false;
}

// The next steps of a rank: its ring's next round, or its next phase's (a transfers phase's sends apart: they
// leave together before its other steps), or its next stage's; false when it has none left.
bool RankPrograms::load_steps(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  state.steps.clear();
  state.next = 0;
  while (true) {
    const GroupRun& group = group_of(state);
    const model::DecodePlan& plan = *group.plan;
    const int p = static_cast<int>(plan.gpus.size());
    while (state.phase < plan.phases.size()) {
      const bool ring = is_ring_phase(plan.phases[state.phase].kind);
      if (ring && state.round < 0 && rings_alone_) {
        park_in_ring(rank);
        return true;
      }
      if (ring && state.round + 1 < p) {
        if (state.round < 0) state.phase_start_s = network_.now();
        ++state.round;
        count_work(1);
        const std::optional<double> last_round_s =
            state.stage == 0 ? steady_.on_round_start(rank, state.round, network_.now()) : std::nullopt;
        if (last_round_s) {
          if (*last_round_s < network_.now() - 1e-12)
            throw std::logic_error("ring steady state: a rank is past its last round");
          book_skipped_rounds(accounts_, rank, *group.model, plan, options_.degradation, state.local, state.round,
                              network_.now(), *last_round_s);
          count_work(p - 1 - state.round);
          state.round = p - 1;
          state.skip_until_s = *last_round_s;
        }
        model::append_round_steps(plan, state.local, state.round, state.steps);
        for (model::Step& step : state.steps) step.phase = static_cast<int>(state.phase);
        return true;
      }
      if (!ring && state.round < 0) {
        state.phase_start_s = network_.now();
        state.round = p;  // loaded
        count_work(1);
        phase_steps_[static_cast<size_t>(state.group)].append(state.local, state.phase, state.steps);
        auto not_send = [](const model::Step& s) { return s.kind != model::StepKind::send; };
        const auto first_send = std::stable_partition(state.steps.begin(), state.steps.end(), not_send);
        state.phase_sends.assign(first_send, state.steps.end());
        state.steps.erase(first_send, state.steps.end());
        if (!state.steps.empty() || !state.phase_sends.empty()) return true;
      }
      phase_s_[phase_offset_[static_cast<size_t>(state.stage * run_.ranks() + rank)] + state.phase] =
          network_.now() - state.phase_start_s;
      ++state.phase;
      state.round = -1;
    }
    stage_finish_s_[static_cast<size_t>(state.stage * run_.ranks() + rank)] = network_.now();
    if (!enter_stage(rank, state.stage)) return false;
  }
}

// A rank runs its steps until one makes it wait, or it is done.
void RankPrograms::run_rank(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  while (true) {
    if (state.skip_until_s >= 0) {  // SimGrid's sleep_until: no wait when it is now
      const double until_s = state.skip_until_s;
      state.skip_until_s = -1;
      if (until_s > network_.now()) {
        state.wait = Wait::skip;
        schedule(until_s, rank_wakes, rank);
        return;
      }
    }
    if (!state.phase_sends.empty() && !post_phase_sends(rank)) return;
    if (state.next == state.steps.size()) {
      if (load_steps(rank)) {
        if (state.parked) return;
        continue;
      }
      state.done = true;
      finish_s_[static_cast<size_t>(rank)] = network_.now();
      return;
    }
    const model::Step& step = state.steps[state.next++];
    state.waiting_since_s = network_.now();
    state.waiting_step = &step;
    if (!run_step(rank, step)) return;
  }
}

bool RankPrograms::run_step(int rank, const model::Step& step) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const GroupRun& group = group_of(state);
  const long long send_phase = (static_cast<long long>(state.stage) << 20) + step.phase;
  switch (step.kind) {
    case model::StepKind::compute: {
      const double duration_s = kernel_time_s(*group.model, *group.plan, options_.degradation, state.local, step);
      accounts_.kernel(rank, network_.now(), network_.now() + duration_s);
      if (!(duration_s > 0)) return true;  // SimGrid's sleep_for(0) does not wait either
      state.wait = Wait::kernel;
      schedule(network_.now() + duration_s, rank_wakes, rank);
      return false;
    }
    case model::StepKind::send: {  // a ring's: its earlier phases' sends first, then onto the channel
      if (send_phase != state.last_send_phase && state.delivered < state.issued) {
        state.wait = Wait::drain;
        return false;
      }
      state.last_send_phase = send_phase;
      ++state.issued;
      RingChannel& path = channel(rank, run_rank_of(state, step.peer));
      path.queued_bytes.push_back(step.bytes);
      if (!path.busy) start_block(path);
      if (step.overlaps_next || state.delivered == state.issued) return true;
      state.wait = Wait::delivery;
      return false;
    }
    case model::StepKind::receive: {
      PairQueue& queue = incoming(rank, run_rank_of(state, step.peer));
      if (!queue.arrived.empty() && queue.arrived.front()) {
        queue.arrived.pop_front();
        ++queue.taken;
        return true;
      }
      state.wait = Wait::arrival;
      return false;
    }
    case model::StepKind::collective:
      if (group.plan->costs.collective_call_s > 0) {  // the host's call first
        state.wait = Wait::host_call;
        schedule(network_.now() + group.plan->costs.collective_call_s, rank_wakes, rank);
      } else {
        arrive_at_collective(rank);
      }
      return false;
  }
  throw std::logic_error("plan replay: a step of no known kind");
}

// A rank's wait is over (now): its span booked, then on with its steps.
void RankPrograms::wake(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const Wait wait = state.wait;
  state.wait = Wait::none;
  const model::Step* step = state.waiting_step;
  switch (wait) {
    case Wait::kernel:
    case Wait::delivery:
    case Wait::arrival:
      if (network_.now() > state.waiting_since_s) {
        const bool kernel = wait == Wait::kernel;
        accounts_.note({rank, kernel ? ActivityKind::compute : ActivityKind::wait, state.waiting_since_s,
                        network_.now(), kernel ? -1 : run_rank_of(state, step->peer), step->phase, state.group});
      }
      break;
    case Wait::drain:  // a ring send goes on (its span from its start); a phase's sends are posted by run_rank
      if (!state.phase_sends.empty()) break;
      if (!run_step(rank, *step)) return;
      break;
    case Wait::host_call: arrive_at_collective(rank); return;
    case Wait::ring_alone: state.parked = false; break;  // its ring computed, at the end of its last round
    case Wait::collective:
    case Wait::skip:
    case Wait::none: break;
  }
  run_rank(rank);
}

// A transfers phase's sends: once the rank's earlier sends have arrived, each leaves after its own latency,
// all under way together.
bool RankPrograms::post_phase_sends(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const int phase = state.phase_sends.front().phase;
  const long long send_phase = (static_cast<long long>(state.stage) << 20) + phase;
  if (send_phase != state.last_send_phase && state.delivered < state.issued) {
    state.wait = Wait::drain;
    return false;
  }
  state.last_send_phase = send_phase;
  state.issued += static_cast<long long>(state.phase_sends.size());
  const std::vector<double> latencies_s = group_latencies_s(*group_of(state).model, state.local, state.phase_sends);
  state.batch_left = static_cast<int>(state.phase_sends.size());
  state.batch_first_start_s = std::numeric_limits<double>::infinity();
  for (size_t i : by_latency(latencies_s)) {
    const model::Step& send = state.phase_sends[i];
    pending_sends_.push_back(
        {rank, run_rank_of(state, send.peer), send.phase, send.bytes, state.group, state.local, send.peer});
    if (latencies_s[i] > 0) {
      schedule(network_.now() + latencies_s[i], send_due, static_cast<int>(pending_sends_.size() - 1));
    } else {
      post_send(pending_sends_.back());
    }
  }
  state.phase_sends.clear();
  return true;
}

void RankPrograms::arrive_at_collective(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const size_t index = collective_of_[static_cast<size_t>(state.group)].at(state.next_collective++);
  CollectiveState& collective = collectives_[index];
  collective.arrival_s[static_cast<size_t>(state.local)] = network_.now();
  state.wait = Wait::collective;
  if (++collective.arrived < static_cast<int>(collective.arrival_s.size())) return;
  // The step latencies, then the flows (capped at the model's rate where NCCL's limits make it slower than the
  // links: collective_flows.hpp).
  schedule(network_.now() + collective.schedule->chosen.latency_s, collective_starts, static_cast<int>(index));
}

void RankPrograms::begin() {
  for (int rank = 0; rank < run_.ranks(); ++rank) {
    if (enter_stage(rank, -1)) {
      run_rank(rank);
    } else {
      state_[static_cast<size_t>(rank)].done = true;
      finish_s_[static_cast<size_t>(rank)] = 0;
    }
  }
}

void RankPrograms::on_wakeup(Wakeup wakeup) {
  switch (static_cast<WakeupKind>(wakeup.kind)) {
    case rank_wakes: wake(wakeup.index); break;
    case channel_latency_over: move_block(channels_[static_cast<size_t>(wakeup.index)]); break;
    case send_due: post_send(pending_sends_[static_cast<size_t>(wakeup.index)]); break;
    case collective_starts: start_flows(wakeup.index); break;
  }
}

void RankPrograms::on_flow_done(int tag) { transfer_arrived(tag); }

ReplayResult RankPrograms::run() {
  network_.run(*this);
  std::string stuck;
  for (int rank = 0; rank < run_.ranks(); ++rank) {
    if (finish_s_[static_cast<size_t>(rank)] < 0) stuck += (stuck.empty() ? "" : ", ") + std::to_string(run_.gpu(rank));
  }
  if (!stuck.empty()) throw std::runtime_error("deadlock: GPUs " + stuck + " never finished (waiting to receive)");
  if (options_.progress) options_.progress(1.0);
  return result();
}

}  // namespace treering::sim::detail
