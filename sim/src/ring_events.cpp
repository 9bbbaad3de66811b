// The ring's own event loop (ring_events.hpp).
#include "ring_events.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "rank_accounts.hpp"
#include "simulated_units.hpp"

namespace treering::sim::detail {

bool ring_events_replay(const model::DecodePlan& plan) {
  int rings = 0;
  for (const model::Phase& phase : plan.phases) {
    switch (phase.kind) {
      case model::PhaseKind::ring_pass:
      case model::PhaseKind::q_ring: ++rings; break;
      case model::PhaseKind::collective:
      case model::PhaseKind::transfers: return false;
      default: break;  // attend, merge, elementwise, host: kernels and host time only
    }
  }
  return rings == 1;
}

namespace {

// SimGrid's precision/timing (its default): an action due within this of the current instant ends at it.
constexpr double kSameInstant_s = 1e-9;

enum class EventKind : std::uint8_t { rank_wakes, latency_over, transfer_done };

struct Event {
  double at_s;
  std::uint64_t order;  // creation order: events at one instant go first-made first
  EventKind kind;
  int index;               // the rank, or the channel
  std::uint64_t version;   // transfer_done: stale once its transfer's rate changed
};

struct Later {
  bool operator()(const Event& a, const Event& b) const { return a.at_s != b.at_s ? a.at_s > b.at_s : a.order > b.order; }
};

// One direction between two ranks: its blocks one at a time, latency first.
struct Channel {
  int from = 0, to = 0;
  const model::DecodeModel::PairCost* cost = nullptr;
  std::vector<topologies::LinkId> links;
  double alone_units_per_s = 0;  // its slowest link's rate
  bool shares_links = false;     // a link of its route is on another channel's too
  std::deque<double> queued_bytes;
  bool busy = false;             // a block in its latency or moving
  bool moving = false;
  double start_s = 0, remaining_units = 0, units_per_s = 0, updated_s = 0;
  std::uint64_t version = 0;
  long long arrived = 0;  // blocks delivered
  long long taken = 0;    // of them, received by `to`
};

enum class Wait : std::uint8_t { none, kernel, delivery, arrival };

struct RankState {
  size_t phase = 0;
  int round = -1;          // in a ring phase: the round whose steps are loaded
  std::vector<model::Step> steps;
  size_t next = 0;
  double phase_start_s = 0;
  Wait wait = Wait::none;
  double waiting_since_s = 0;
  const model::Step* waiting_step = nullptr;
  long long issued = 0, delivered = 0;  // its sends
  int last_send_phase = -1;
  bool done = false;
};

class RingEvents {
 public:
  RingEvents(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options);
  std::vector<double> run();

 private:
  bool is_ring(size_t phase) const {
    return plan_.phases[phase].kind == model::PhaseKind::ring_pass || plan_.phases[phase].kind == model::PhaseKind::q_ring;
  }
  Channel& channel(int from, int to);
  void schedule(double at_s, EventKind kind, int index, std::uint64_t version = 0) {
    events_.push({at_s, order_++, kind, index, version});
  }
  bool load_steps(int rank);
  void run_rank(int rank);
  bool run_step(int rank, const model::Step& step);  // false: the rank waits
  void wake(int rank);
  void start_block(Channel& path);
  void start_moving(Channel& path);
  void block_arrived(Channel& path);
  void reshare(const Channel& changed);
  void handle(const Event& event);

  const model::DecodeModel& model_;
  const model::DecodePlan& plan_;
  const ReplayOptions& options_;
  const std::vector<bool>* down_;
  const int ranks_;
  model::LinkEfficiency efficiency_;
  RankAccounts accounts_;
  std::vector<RankState> state_;
  std::vector<Channel> channels_;
  std::unordered_map<long long, size_t> channel_of_pair_;
  std::vector<std::vector<size_t>> moving_on_link_;  // per link: the channels moving a block over it
  std::vector<int> channels_on_link_;
  std::vector<double> link_units_per_s_;  // per link a channel uses
  std::vector<std::uint64_t> channel_seen_, link_seen_;  // reshare's marks
  std::uint64_t mark_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t order_ = 0;
  double now_s_ = 0;
  double transfers_ = 0;
  std::vector<double> finish_s_, phase_s_;
};

RingEvents::RingEvents(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options)
    : model_(model), plan_(plan), options_(options),
      down_(options.degradation.cables_down.empty() ? nullptr : &options.degradation.cables_down),
      ranks_(static_cast<int>(plan.gpus.size())), efficiency_(model::link_efficiency(model.topology())),
      accounts_(model, plan.gpus.size(), options.record_activities), state_(plan.gpus.size()),
      moving_on_link_(static_cast<size_t>(model.topology().link_count())),
      channels_on_link_(static_cast<size_t>(model.topology().link_count()), 0),
      link_units_per_s_(static_cast<size_t>(model.topology().link_count()), 0.0),
      link_seen_(static_cast<size_t>(model.topology().link_count()), 0),
      finish_s_(plan.gpus.size(), -1.0), phase_s_(plan.gpus.size() * plan.phases.size(), 0.0) {
  // The channels first, each with its route, so that each knows whether it shares a link (then its rates are
  // max-min's, else its slowest link's).
  for (int rank = 0; rank < ranks_; ++rank) {
    channel(rank, (rank + 1) % ranks_);
  }
  channel_seen_.assign(channels_.size(), 0);
  for (Channel& path : channels_) {
    for (topologies::LinkId id : path.links) path.shares_links = path.shares_links || channels_on_link_[static_cast<size_t>(id)] > 1;
  }
}

Channel& RingEvents::channel(int from, int to) {
  const long long key = static_cast<long long>(from) * ranks_ + to;
  const auto found = channel_of_pair_.find(key);
  if (found != channel_of_pair_.end()) return channels_[found->second];
  if (!channels_.empty() && channels_.size() >= static_cast<size_t>(ranks_)) {
    throw std::logic_error("ring replay: rank " + std::to_string(from) + " sends to rank " + std::to_string(to) +
                           ", not its successor");
  }
  Channel path;
  path.from = from;
  path.to = to;
  path.cost = &model_.p2p(from, to);
  const topologies::Topology& topology = model_.topology();
  path.links = topology.route(plan_.gpus[static_cast<size_t>(from)], plan_.gpus[static_cast<size_t>(to)], down_).links;
  path.alone_units_per_s = 0;
  for (topologies::LinkId id : path.links) {
    const double units_per_s = link_units_per_s(topology, efficiency_, &options_.degradation, id);
    link_units_per_s_[static_cast<size_t>(id)] = units_per_s;
    path.alone_units_per_s = path.alone_units_per_s == 0 ? units_per_s : std::min(path.alone_units_per_s, units_per_s);
    ++channels_on_link_[static_cast<size_t>(id)];
  }
  channel_of_pair_[key] = channels_.size();
  channels_.push_back(std::move(path));
  return channels_.back();
}

// The next steps of a rank: its ring's next round, or its next phase's; false when it has none left.
bool RingEvents::load_steps(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  state.steps.clear();
  state.next = 0;
  while (state.phase < plan_.phases.size()) {
    if (is_ring(state.phase) && state.round + 1 < ranks_) {
      if (state.round < 0) state.phase_start_s = now_s_;
      model::append_round_steps(plan_, rank, ++state.round, state.steps);
      for (model::Step& step : state.steps) step.phase = static_cast<int>(state.phase);
      return true;
    }
    if (!is_ring(state.phase) && state.round < 0) {  // a phase of kernels: all its steps at once
      state.phase_start_s = now_s_;
      state.round = ranks_;  // loaded
      model::append_phase_steps(plan_, rank, state.phase, state.steps);
      if (!state.steps.empty()) return true;
    }
    phase_s_[static_cast<size_t>(rank) * plan_.phases.size() + state.phase] = now_s_ - state.phase_start_s;
    ++state.phase;
    state.round = -1;
  }
  return false;
}

// A rank runs its steps until one makes it wait, or it is done.
void RingEvents::run_rank(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  while (true) {
    if (state.next == state.steps.size() && !load_steps(rank)) {
      state.done = true;
      finish_s_[static_cast<size_t>(rank)] = now_s_;
      return;
    }
    const model::Step& step = state.steps[state.next++];
    if (!run_step(rank, step)) return;
  }
}

bool RingEvents::run_step(int rank, const model::Step& step) {
  RankState& state = state_[static_cast<size_t>(rank)];
  state.waiting_since_s = now_s_;
  state.waiting_step = &step;
  switch (step.kind) {
    case model::StepKind::compute: {
      const double duration_s = kernel_time_s(model_, plan_, options_.degradation, rank, step);
      accounts_.kernel(rank, now_s_, now_s_ + duration_s);
      if (!(duration_s > 0)) return true;  // SimGrid's sleep_for(0) does not wait either
      state.wait = Wait::kernel;
      schedule(now_s_ + duration_s, EventKind::rank_wakes, rank);
      return false;
    }
    case model::StepKind::send: {
      if (step.phase != state.last_send_phase && state.delivered < state.issued) {
        throw std::logic_error("ring replay: sends of an earlier phase still under way");  // no such plan goes here
      }
      state.last_send_phase = step.phase;
      ++state.issued;
      Channel& path = channel(rank, step.peer);
      path.queued_bytes.push_back(step.bytes);
      if (!path.busy) start_block(path);
      if (step.overlaps_next || state.delivered == state.issued) return true;
      state.wait = Wait::delivery;
      return false;
    }
    case model::StepKind::receive: {
      Channel& path = channel(step.peer, rank);
      if (path.arrived > path.taken) {
        ++path.taken;
        return true;
      }
      state.wait = Wait::arrival;
      return false;
    }
    case model::StepKind::collective: break;
  }
  throw std::logic_error("ring replay: a collective step");  // ring_events_replay keeps these plans out
}

// A rank's wait is over (at now_s_): its span booked, then on with its steps.
void RingEvents::wake(int rank) {
  RankState& state = state_[static_cast<size_t>(rank)];
  const model::Step& step = *state.waiting_step;
  const Wait wait = state.wait;
  state.wait = Wait::none;
  if (now_s_ > state.waiting_since_s) {
    const ActivityKind kind = wait == Wait::kernel ? ActivityKind::compute : ActivityKind::wait;
    accounts_.note({rank, kind, state.waiting_since_s, now_s_, wait == Wait::kernel ? -1 : step.peer, step.phase});
  }
  run_rank(rank);
}

// The channel takes its next block: the latency first (as SimGrid's channel actor sleeps it).
void RingEvents::start_block(Channel& path) {
  if (path.queued_bytes.empty()) return;
  path.busy = true;
  const double latency_s = plan_.ring_exchanges_per_step * path.cost->at(path.queued_bytes.front()).latency_s;
  if (latency_s > 0) {
    schedule(now_s_ + latency_s, EventKind::latency_over, static_cast<int>(&path - channels_.data()));
  } else {
    start_moving(path);
  }
}

void RingEvents::start_moving(Channel& path) {
  const double bytes = path.queued_bytes.front();
  path.queued_bytes.pop_front();
  ++transfers_;
  path.moving = true;
  path.start_s = path.updated_s = now_s_;
  path.remaining_units = static_cast<double>(simulated_size(bytes * path.cost->size_factor(bytes)));
  const int index = static_cast<int>(&path - channels_.data());
  if (path.shares_links) {
    for (topologies::LinkId id : path.links) moving_on_link_[static_cast<size_t>(id)].push_back(static_cast<size_t>(index));
    reshare(path);
  } else {
    path.units_per_s = path.alone_units_per_s;
    schedule(now_s_ + path.remaining_units / path.units_per_s, EventKind::transfer_done, index, ++path.version);
  }
}

// A block has arrived: the sender's books, its successor's receive, the channel's next block.
void RingEvents::block_arrived(Channel& path) {
  path.moving = false;
  path.busy = false;
  if (path.shares_links) {
    const size_t index = static_cast<size_t>(&path - channels_.data());
    for (topologies::LinkId id : path.links) {
      std::vector<size_t>& moving = moving_on_link_[static_cast<size_t>(id)];
      moving.erase(std::find(moving.begin(), moving.end(), index));
    }
    reshare(path);
  }
  accounts_.note({path.from, ActivityKind::send, path.start_s, now_s_, path.to});
  accounts_.busy_sending(path.from, path.start_s, now_s_);
  RankState& sender = state_[static_cast<size_t>(path.from)];
  ++sender.delivered;
  ++path.arrived;
  start_block(path);
  if (sender.wait == Wait::delivery && sender.delivered == sender.issued) wake(path.from);
  RankState& receiver = state_[static_cast<size_t>(path.to)];
  if (receiver.wait == Wait::arrival && receiver.waiting_step->peer == path.from && path.arrived > path.taken) {
    ++path.taken;
    wake(path.to);
  }
}

// The rates of the blocks moving on links shared with `changed` (transitively: a change on one link moves
// the max-min shares of everything connected to it), by progressive filling: the link with the least rate
// left per unfixed transfer fixes its transfers at that share, until all are fixed. E.g. transfers A and B
// on a 10 GB/s link, B also on a 4 GB/s one alone: B gets 4, A the 6 left.
void RingEvents::reshare(const Channel& changed) {
  ++mark_;
  std::vector<size_t> moving;
  std::vector<topologies::LinkId> links;
  auto visit_link = [&](topologies::LinkId id) {
    if (link_seen_[static_cast<size_t>(id)] == mark_) return;
    link_seen_[static_cast<size_t>(id)] = mark_;
    links.push_back(id);
  };
  for (topologies::LinkId id : changed.links) visit_link(id);
  for (size_t next_link = 0; next_link < links.size(); ++next_link) {
    for (size_t index : moving_on_link_[static_cast<size_t>(links[next_link])]) {
      if (channel_seen_[index] == mark_) continue;
      channel_seen_[index] = mark_;
      moving.push_back(index);
      for (topologies::LinkId id : channels_[index].links) visit_link(id);
    }
  }
  std::unordered_map<topologies::LinkId, std::pair<double, int>> left;  // rate left, transfers not yet fixed
  for (topologies::LinkId id : links) {
    left[id] = {link_units_per_s_[static_cast<size_t>(id)], static_cast<int>(moving_on_link_[static_cast<size_t>(id)].size())};
  }
  for (size_t index : moving) {
    Channel& path = channels_[index];
    path.remaining_units -= path.units_per_s * (now_s_ - path.updated_s);
    path.updated_s = now_s_;
    path.units_per_s = -1;  // not fixed
  }
  for (size_t fixed = 0; fixed < moving.size();) {
    topologies::LinkId bottleneck = -1;
    double share = 0;
    for (const auto& [id, rate] : left) {
      if (rate.second > 0 && (bottleneck < 0 || rate.first / rate.second < share)) {
        bottleneck = id;
        share = rate.first / rate.second;
      }
    }
    for (size_t index : moving_on_link_[static_cast<size_t>(bottleneck)]) {
      Channel& path = channels_[index];
      if (path.units_per_s >= 0) continue;
      path.units_per_s = share;
      ++fixed;
      for (topologies::LinkId id : path.links) {
        left[id].first -= share;
        --left[id].second;
      }
    }
  }
  for (size_t index : moving) {
    Channel& path = channels_[index];
    schedule(now_s_ + std::max(0.0, path.remaining_units) / path.units_per_s, EventKind::transfer_done,
             static_cast<int>(index), ++path.version);
  }
}

void RingEvents::handle(const Event& event) {
  switch (event.kind) {
    case EventKind::rank_wakes: wake(event.index); break;
    case EventKind::latency_over: start_moving(channels_[static_cast<size_t>(event.index)]); break;
    case EventKind::transfer_done: {
      Channel& path = channels_[static_cast<size_t>(event.index)];
      if (path.moving && event.version == path.version) block_arrived(path);
      break;
    }
  }
}

std::vector<double> RingEvents::run() {
  for (int rank = 0; rank < ranks_; ++rank) run_rank(rank);
  std::vector<Event> instant;
  while (!events_.empty()) {
    now_s_ = events_.top().at_s;
    instant.clear();
    while (!events_.empty() && events_.top().at_s - now_s_ < kSameInstant_s) {
      instant.push_back(events_.top());
      events_.pop();
    }
    for (const Event& event : instant) handle(event);
  }
  for (int rank = 0; rank < ranks_; ++rank) {
    if (!state_[static_cast<size_t>(rank)].done) {
      throw std::logic_error("ring replay: rank " + std::to_string(rank) + " never finished (waiting to receive)");
    }
  }
  return replay_values(transfers_, finish_s_, accounts_, phase_s_, plan_.phases.size());
}

}  // namespace

std::vector<double> replay_ring_events(const model::DecodeModel& model, const model::DecodePlan& plan,
                                       const ReplayOptions& options) {
  return RingEvents(model, plan, options).run();
}

}  // namespace treering::sim::detail
