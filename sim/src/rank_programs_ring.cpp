// The ranks' programs (rank_programs.hpp): a ring whose blocks each cross links that nothing else uses, replayed
// round by round in order instead of event by event. Each block is then alone on its route from its latency to
// its arrival: it takes latency + units / (its slowest link, or its cap), the time the event loop gives it; the
// ranks' steps are the same (host step, send queued on the channel, attention, receive), and so are the
// accounts. O(p^2) arithmetic for a ring of p GPUs, about 30x less than its events: the uneven rings (blocks one
// token apart, which never reach the steady state of ring_steady.hpp) of thousands of GPUs. Used when the run
// allows shortcuts (ReplayOptions::skip_steady_rounds), records no timeline, has one stage, and every group's
// only phase with transfers is a ring of uneven blocks whose edges share no link with one another.
#include <algorithm>
#include <array>
#include <deque>
#include <stdexcept>
#include <limits>

#include "rank_programs.hpp"

namespace treering::sim::detail {

bool RankPrograms::rings_alone() const {
  if (!options_.skip_steady_rounds || options_.record_activities || run_.stages() != 1) return false;
  const topologies::Topology& topology = run_.topology();
  std::vector<char> used(static_cast<size_t>(topology.link_count()), 0);
  for (const GroupRun& group : run_.groups()) {
    const model::DecodePlan& plan = *group.plan;
    const int p = static_cast<int>(plan.gpus.size());
    int rings = 0;
    for (const model::Phase& phase : plan.phases) {
      if (phase.kind == model::PhaseKind::ring_pass) ++rings;
      if (phase.kind == model::PhaseKind::collective || phase.kind == model::PhaseKind::transfers ||
          phase.kind == model::PhaseKind::q_ring) {
        return false;
      }
    }
    if (rings != 1 || p < 2 || equal_blocks(plan)) return false;  // equal blocks: the steady state skips them
    for (int local = 0; local < p; ++local) {
      for (topologies::LinkId id : topology.route(plan.gpus[static_cast<size_t>(local)], plan.gpus[static_cast<size_t>((local + 1) % p)], down_).links) {
        if (used[static_cast<size_t>(id)]) return false;
        used[static_cast<size_t>(id)] = 1;
      }
    }
  }
  return true;
}

// The rank waits, out of time, until every rank of its group has reached the ring.
void RankPrograms::park_in_ring(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const int p = static_cast<int>(group_of(state).plan->gpus.size());
  state.parked = true;
  state.wait = Wait::none;
  state.phase_start_s = network_.now();
  count_work(p);
  std::vector<double>& entry_s = ring_entry_s_[static_cast<size_t>(state.group)];
  entry_s.resize(static_cast<size_t>(p), 0.0);
  entry_s[static_cast<size_t>(state.local)] = network_.now();
  if (++ring_entered_[static_cast<size_t>(state.group)] == p) run_ring_alone(state.group);
}

namespace {

// What a block of one size costs on one edge, alone on its route: its latencies, then its units at the rate.
struct BlockCost {
  double bytes = -1, latency_s = 0, duration_s = 0;
};

}  // namespace

void RankPrograms::run_ring_alone(int g) {
  const GroupRun& group = run_.group(g);
  const model::DecodePlan& plan = *group.plan;
  const int p = static_cast<int>(plan.gpus.size());
  const int phase = static_cast<int>(state_[static_cast<size_t>(group.members.front())].phase);
  const model::LinkEfficiency efficiency = model::link_efficiency(run_.topology());
  std::vector<double> start_s = ring_entry_s_[static_cast<size_t>(g)], end_s(static_cast<size_t>(p), 0.0);
  std::vector<double> channel_free_s(static_cast<size_t>(p), 0.0), arrival_s(static_cast<size_t>(p), 0.0);
  std::vector<std::deque<std::pair<double, double>>> moving(static_cast<size_t>(p));  // sends not yet booked
  std::vector<std::array<BlockCost, 2>> costs(static_cast<size_t>(p));
  std::vector<std::array<std::pair<long long, double>, 3>> attention(static_cast<size_t>(p), {{{-1, 0.0}, {-1, 0.0}, {-1, 0.0}}});
  auto block = [&](int i, int round) { return plan.shards[static_cast<size_t>(((i - round) % p + p) % p)].count; };
  auto rank_of = [&](int i) { return group.members[static_cast<size_t>((i + p) % p)]; };
  // A send books its time under compute when it arrives: before any kernel starting then or later (busy_sending).
  auto book_sends_until = [&](int i, double until_s) {
    for (auto& queue = moving[static_cast<size_t>(i)]; !queue.empty() && queue.front().second <= until_s; queue.pop_front()) {
      accounts_.busy_sending(rank_of(i), queue.front().first, queue.front().second);
    }
  };
  auto kernel = [&](int i, double& now_s, double duration_s) {
    book_sends_until(i, now_s);
    accounts_.kernel(rank_of(i), now_s, now_s + duration_s);
    if (duration_s > 0) accounts_.note({rank_of(i), ActivityKind::compute, now_s, now_s + duration_s, -1, phase, g});
    now_s += duration_s;
  };
  auto attention_s = [&](int i, int round) {  // the round's attention on rank i: by its tokens, worked out once
    const long long tokens = block(i, round);
    for (auto& [held, time_s] : attention[static_cast<size_t>(i)]) {
      if (held == tokens) return time_s;
      if (held >= 0) continue;
      std::vector<model::Step> steps;
      model::append_round_steps(plan, i, round, steps);
      for (const model::Step& step : steps) {
        if (step.attention) time_s = kernel_time_s(*group.model, plan, options_.degradation, i, step);
      }
      held = tokens;
      return time_s;
    }
    throw std::logic_error("ring: more than three block sizes");
  };
  auto send = [&](int i, double at_s, double bytes) {  // queued on the channel to i + 1: latency, then its units
    BlockCost& cost = costs[static_cast<size_t>(i)][costs[static_cast<size_t>(i)][0].bytes == bytes || costs[static_cast<size_t>(i)][0].bytes < 0 ? 0 : 1];
    if (cost.bytes != bytes) {
      const model::DecodeModel::PairCost& pair = group.model->p2p(i, (i + 1) % p);
      double rate = std::numeric_limits<double>::infinity();
      for (topologies::LinkId id : route(rank_of(i), rank_of(i + 1))) {
        rate = std::min(rate, link_units_per_s(run_.topology(), efficiency, &options_.degradation, id));
      }
      if (pair.rate_cap_Bps(bytes) > 0) rate = std::min(rate, pair.rate_cap_Bps(bytes) * kSizeUnitsPerByte);
      cost = {bytes, plan.ring_exchanges_per_step * pair.at(bytes).latency_s,
              static_cast<double>(simulated_size(bytes * pair.size_factor(bytes))) / rate};
    }
    const double moves_s = std::max(at_s, channel_free_s[static_cast<size_t>(i)]) + cost.latency_s;
    arrival_s[static_cast<size_t>(i)] = channel_free_s[static_cast<size_t>(i)] = moves_s + cost.duration_s;
    moving[static_cast<size_t>(i)].emplace_back(moves_s, arrival_s[static_cast<size_t>(i)]);
    ++transfers_;
    RankState& state = state_[static_cast<size_t>(rank_of(i))];
    ++state.issued;
    ++state.delivered;
  };
  const double kv = plan.sizes.kv_bytes_per_token;
  for (int round = 0; round < p; ++round) {
    for (int i = 0; i < p; ++i) {  // host step, send (beside the attention, or after it), attention
      double now_s = start_s[static_cast<size_t>(i)];
      if (plan.ring_step_host_s > 0) kernel(i, now_s, plan.ring_step_host_s);
      const bool sends = round < p - 1 && block(i, round) > 0;
      if (sends && plan.ring_overlap) send(i, now_s, static_cast<double>(block(i, round)) * kv);
      kernel(i, now_s, attention_s(i, round));
      if (sends && !plan.ring_overlap) {  // the rank copies the block itself: it waits until it has arrived
        send(i, now_s, static_cast<double>(block(i, round)) * kv);
        const double sent_s = arrival_s[static_cast<size_t>(i)];
        if (sent_s > now_s) accounts_.note({rank_of(i), ActivityKind::wait, now_s, sent_s, rank_of(i + 1), phase, g});
        book_sends_until(i, sent_s);
        now_s = std::max(now_s, sent_s);
      }
      end_s[static_cast<size_t>(i)] = now_s;
    }
    for (int i = 0; i < p; ++i) {  // the receive of the next round's block, from i - 1
      double now_s = end_s[static_cast<size_t>(i)];
      if (round < p - 1 && block(i, round + 1) > 0) {
        const double arrives_s = arrival_s[static_cast<size_t>((i + p - 1) % p)];
        if (arrives_s > now_s) accounts_.note({rank_of(i), ActivityKind::wait, now_s, arrives_s, rank_of(i - 1), phase, g});
        now_s = std::max(now_s, arrives_s);
      }
      start_s[static_cast<size_t>(i)] = now_s;
    }
  }
  for (int i = 0; i < p; ++i) {  // each rank goes on after its last round, at its own time
    book_sends_until(i, std::numeric_limits<double>::infinity());
    const int rank = rank_of(i);
    RankState& state = state_[static_cast<size_t>(rank)];
    phase_s_[phase_offset_[static_cast<size_t>(rank)] + state.phase] = end_s[static_cast<size_t>(i)] - state.phase_start_s;
    ++state.phase;
    state.round = -1;
    state.steps.clear();
    state.next = 0;
    state.wait = Wait::ring_alone;
    schedule(end_s[static_cast<size_t>(i)], rank_wakes, rank);
  }
}

}  // namespace treering::sim::detail
