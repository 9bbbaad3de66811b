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
      for (topologies::LinkId id :
           topology.route(plan.gpus[static_cast<size_t>(local)], plan.gpus[static_cast<size_t>((local + 1) % p)], down_)
               .links) {
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

// One group's ring, round by round: per rank its round's start, its channel, its sends not yet booked.
class AloneRing {
 public:
  AloneRing(RankPrograms& programs, int g)
      : r_(programs),
        g_(g),
        group_(programs.run_.group(g)),
        plan_(*group_.plan),
        p_(static_cast<int>(plan_.gpus.size())),
        phase_(static_cast<int>(programs.state_[static_cast<size_t>(group_.members.front())].phase)),
        efficiency_(model::link_efficiency(programs.run_.topology())),
        start_s_(programs.ring_entry_s_[static_cast<size_t>(g)]),
        end_s_(size(), 0.0),
        channel_free_s_(size(), 0.0),
        arrival_s_(size(), 0.0),
        moving_(size()),
        costs_(size()),
        attention_(size(), {{{-1, 0.0}, {-1, 0.0}, {-1, 0.0}}}) {}

  void run() {
    for (int round = 0; round < p_; ++round) {
      for (int i = 0; i < p_; ++i) steps_before_receive(i, round);
      for (int i = 0; i < p_; ++i) receive(i, round);
    }
    for (int i = 0; i < p_; ++i) finish(i);
  }

 private:
  size_t size() const { return static_cast<size_t>(p_); }
  long long block(int i, int round) const {
    return plan_.shards[static_cast<size_t>(((i - round) % p_ + p_) % p_)].count;
  }
  int rank_of(int i) const { return group_.members[static_cast<size_t>((i + p_) % p_)]; }

  // A send books its time under compute when it arrives: before any kernel starting then or later (busy_sending).
  void book_sends_until(int i, double until_s) {
    for (auto& queue = moving_[static_cast<size_t>(i)]; !queue.empty() && queue.front().second <= until_s;
         queue.pop_front()) {
      r_.accounts_.busy_sending(rank_of(i), queue.front().first, queue.front().second);
    }
  }

  void kernel(int i, double& now_s, double duration_s) {
    book_sends_until(i, now_s);
    r_.accounts_.kernel(rank_of(i), now_s, now_s + duration_s);
    if (duration_s > 0)
      r_.accounts_.note({rank_of(i), ActivityKind::compute, now_s, now_s + duration_s, -1, phase_, g_});
    now_s += duration_s;
  }

  // The round's attention on rank i: by its tokens (a ring has two block sizes and empty ones), worked out once.
  double attention_s(int i, int round) {
    const long long tokens = block(i, round);
    for (auto& [held, time_s] : attention_[static_cast<size_t>(i)]) {
      if (held == tokens) return time_s;
      if (held >= 0) continue;
      std::vector<model::Step> steps;
      model::append_round_steps(plan_, i, round, steps);
      for (const model::Step& step : steps) {
        if (step.attention) time_s = kernel_time_s(*group_.model, plan_, r_.options_.degradation, i, step);
      }
      held = tokens;
      return time_s;
    }
    throw std::logic_error("ring: more than three block sizes");
  }

  const BlockCost& cost(int i, double bytes) {
    auto& slots = costs_[static_cast<size_t>(i)];
    BlockCost& cost = slots[slots[0].bytes == bytes || slots[0].bytes < 0 ? 0 : 1];
    if (cost.bytes == bytes) return cost;
    const model::DecodeModel::PairCost& pair = group_.model->p2p(i, (i + 1) % p_);
    double rate = std::numeric_limits<double>::infinity();
    for (topologies::LinkId id : r_.route(rank_of(i), rank_of(i + 1))) {
      rate = std::min(rate, link_units_per_s(r_.run_.topology(), efficiency_, &r_.options_.degradation, id));
    }
    if (pair.rate_cap_Bps(bytes) > 0) rate = std::min(rate, pair.rate_cap_Bps(bytes) * kSizeUnitsPerByte);
    cost = {bytes, plan_.costs.ring_exchanges_per_step * pair.at(bytes).latency_s,
            static_cast<double>(simulated_size(bytes * pair.size_factor(bytes))) / rate};
    return cost;
  }

  // Queued on the channel to i + 1: when the channel is free, its latency, then its units alone on the route.
  void send(int i, double at_s, double bytes) {
    const BlockCost& block_cost = cost(i, bytes);
    const double moves_s = std::max(at_s, channel_free_s_[static_cast<size_t>(i)]) + block_cost.latency_s;
    arrival_s_[static_cast<size_t>(i)] = channel_free_s_[static_cast<size_t>(i)] = moves_s + block_cost.duration_s;
    moving_[static_cast<size_t>(i)].emplace_back(moves_s, arrival_s_[static_cast<size_t>(i)]);
    ++r_.transfers_;
    RankState& state = r_.state_[static_cast<size_t>(rank_of(i))];
    ++state.issued;
    ++state.delivered;
  }

  // The host step, the send (beside the attention, or after it), the attention.
  void steps_before_receive(int i, int round) {
    double now_s = start_s_[static_cast<size_t>(i)];
    if (plan_.costs.ring_step_host_s > 0) kernel(i, now_s, plan_.costs.ring_step_host_s);
    const bool sends = round < p_ - 1 && block(i, round) > 0;
    const double bytes = static_cast<double>(block(i, round)) * plan_.sizes.kv_bytes_per_token;
    if (sends && plan_.ring_overlap) send(i, now_s, bytes);
    kernel(i, now_s, attention_s(i, round));
    if (sends && !plan_.ring_overlap) {  // the rank copies the block itself: it waits until it has arrived
      send(i, now_s, bytes);
      const double sent_s = arrival_s_[static_cast<size_t>(i)];
      if (sent_s > now_s)
        r_.accounts_.note({rank_of(i), ActivityKind::wait, now_s, sent_s, rank_of(i + 1), phase_, g_});
      book_sends_until(i, sent_s);
      now_s = std::max(now_s, sent_s);
    }
    end_s_[static_cast<size_t>(i)] = now_s;
  }

  // The receive of the next round's block, from i - 1.
  void receive(int i, int round) {
    double now_s = end_s_[static_cast<size_t>(i)];
    if (round < p_ - 1 && block(i, round + 1) > 0) {
      const double arrives_s = arrival_s_[static_cast<size_t>((i + p_ - 1) % p_)];
      if (arrives_s > now_s)
        r_.accounts_.note({rank_of(i), ActivityKind::wait, now_s, arrives_s, rank_of(i - 1), phase_, g_});
      now_s = std::max(now_s, arrives_s);
    }
    start_s_[static_cast<size_t>(i)] = now_s;
  }

  // The rank goes on after its last round, at its own time.
  void finish(int i) {
    book_sends_until(i, std::numeric_limits<double>::infinity());
    const int rank = rank_of(i);
    RankState& state = r_.state_[static_cast<size_t>(rank)];
    r_.phase_s_[r_.phase_offset_[static_cast<size_t>(rank)] + state.phase] =
        end_s_[static_cast<size_t>(i)] - state.phase_start_s;
    ++state.phase;
    state.round = -1;
    state.steps.clear();
    state.next = 0;
    state.wait = Wait::ring_alone;
    r_.schedule(end_s_[static_cast<size_t>(i)], RankPrograms::rank_wakes, rank);
  }

  RankPrograms& r_;
  const int g_;
  const GroupRun& group_;
  const model::DecodePlan& plan_;
  const int p_, phase_;
  const model::LinkEfficiency efficiency_;
  std::vector<double> start_s_, end_s_, channel_free_s_, arrival_s_;  // per rank of the group
  std::vector<std::deque<std::pair<double, double>>> moving_;         // its sends not yet booked: moving, arrival
  std::vector<std::array<BlockCost, 2>> costs_;
  std::vector<std::array<std::pair<long long, double>, 3>> attention_;
};

void RankPrograms::run_ring_alone(int group) { AloneRing(*this, group).run(); }

}  // namespace treering::sim::detail
