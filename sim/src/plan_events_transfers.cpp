// The plan's event loop (plan_events.hpp): what the ranks send, and what happens when it arrives.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "plan_events_engine.hpp"
#include "simulated_units.hpp"

namespace treering::sim::detail {

const std::vector<topologies::LinkId>& PlanEvents::route(int from, int to) {
  const long long key = static_cast<long long>(from) * ranks_ + to;
  const auto found = routes_.find(key);
  if (found != routes_.end()) return found->second;
  return routes_[key] = model_.topology()
                            .route(plan_.gpus[static_cast<size_t>(from)], plan_.gpus[static_cast<size_t>(to)], down_)
                            .links;
}

PairQueue& PlanEvents::incoming(int rank, int from) {
  RankState& state = state_[static_cast<size_t>(rank)];
  if (state.last_sender != from) {
    state.last_sender = from;
    state.last_queue = &pair(from, rank);
  }
  return *state.last_queue;
}

RingChannel& PlanEvents::channel(int from, int to) {
  RankState& sender = state_[static_cast<size_t>(from)];
  if (sender.last_channel >= 0 && channels_[static_cast<size_t>(sender.last_channel)].to == to) {
    return channels_[static_cast<size_t>(sender.last_channel)];
  }
  const long long key = static_cast<long long>(from) * ranks_ + to;
  const auto found = channel_of_pair_.find(key);
  if (found != channel_of_pair_.end()) {
    sender.last_channel = static_cast<int>(found->second);
    return channels_[found->second];
  }
  RingChannel path;
  path.from = from;
  path.to = to;
  path.cost = &model_.p2p(from, to);
  path.links = &route(from, to);
  path.queue = &pair(from, to);
  channel_of_pair_[key] = channels_.size();
  sender.last_channel = static_cast<int>(channels_.size());
  channels_.push_back(std::move(path));
  return channels_.back();
}

// The channel takes its next block: the latency first (as SimGrid's channel actor sleeps it).
void PlanEvents::start_block(RingChannel& path) {
  if (path.queued_bytes.empty()) return;
  path.busy = true;
  const double latency_s = plan_.ring_exchanges_per_step * path.cost->at(path.queued_bytes.front()).latency_s;
  if (latency_s > 0) {
    schedule(now_s_ + latency_s, EventKind::channel_latency_over, static_cast<int>(&path - channels_.data()));
  } else {
    move_block(path);
  }
}

void PlanEvents::move_block(RingChannel& path) {
  const double bytes = path.queued_bytes.front();
  path.queued_bytes.pop_front();
  const int index = static_cast<int>(&path - channels_.data());
  start_transfer({TransferKind::ring_block, path.from, path.to, -1, index, path.queue}, *path.links,
                 static_cast<double>(simulated_size(bytes * path.cost->size_factor(bytes))), path.cost->rate_cap_Bps(bytes));
}

void PlanEvents::post_send(const PendingSend& send) {
  const double bytes = send.bytes;
  const model::DecodeModel::PairCost& cost = model_.p2p(send.from, send.to);
  RankState& sender = state_[static_cast<size_t>(send.from)];
  sender.batch_first_start_s = std::min(sender.batch_first_start_s, now_s_);
  start_transfer({TransferKind::phase_send, send.from, send.to, send.phase, 0, &pair(send.from, send.to)},
                 route(send.from, send.to), static_cast<double>(simulated_size(bytes * cost.size_factor(bytes))),
                 cost.rate_cap_Bps(bytes));
}

// A point-to-point transfer takes its place in its pair's queue, which its receiver takes in order.
// `cap_Bps`: 0, or the most it may move at (a calibrated band's rate, NCCL's limits on a collective's flows).
void PlanEvents::start_transfer(TransferOwner owner, const std::vector<topologies::LinkId>& links, double units, double cap_Bps) {
  if (owner.queue) {
    owner.sequence = owner.queue->posted++;
    owner.queue->arrived.push_back(false);
  }
  const int id = links_.start(links, units, now_s_, cap_Bps * kSizeUnitsPerByte);
  if (owners_.size() <= static_cast<size_t>(id)) owners_.resize(static_cast<size_t>(id) + 1);
  owners_[static_cast<size_t>(id)] = owner;
  ++transfers_;
}

void PlanEvents::start_flows(int index) {
  CollectiveState& collective = collectives_[static_cast<size_t>(index)];
  collective.flows_left = collective.schedule->flows.size();
  for (const model::CollectiveFlow& flow : collective.schedule->flows) {
    start_transfer({TransferKind::collective_flow, flow.from, flow.to, collective.phase, index},
                   route(flow.from, flow.to), static_cast<double>(simulated_size(flow.wire_bytes)), flow.max_rate_Bps);
  }
  if (collective.flows_left == 0) collective_over(collective);
}

// Every rank leaves the collective together, as the last flow arrives.
void PlanEvents::collective_over(CollectiveState& collective) {
  for (int rank = 0; rank < ranks_; ++rank) {
    accounts_.note({rank, ActivityKind::collective, collective.arrival_s[static_cast<size_t>(rank)], now_s_, -1,
                    collective.phase});
  }
  for (int rank = 0; rank < ranks_; ++rank) wake(rank);
}

void PlanEvents::transfer_arrived(int id) {
  const TransferOwner owner = owners_[static_cast<size_t>(id)];
  const double start_s = links_.start_s(id);
  links_.end(id);
  accounts_.note({owner.from, ActivityKind::send, start_s, now_s_, owner.to, owner.phase});
  switch (owner.kind) {
    case TransferKind::ring_block: {
      accounts_.busy_sending(owner.from, start_s, now_s_);
      RingChannel& path = channels_[static_cast<size_t>(owner.index)];
      path.busy = false;
      start_block(path);
      sent(owner.from);
      mark_arrived(owner);
      break;
    }
    case TransferKind::phase_send: {
      RankState& sender = state_[static_cast<size_t>(owner.from)];
      if (--sender.batch_left == 0) accounts_.busy_sending(owner.from, sender.batch_first_start_s, now_s_);  // together
      sent(owner.from);
      mark_arrived(owner);
      break;
    }
    case TransferKind::collective_flow: {
      CollectiveState& collective = collectives_[static_cast<size_t>(owner.index)];
      if (--collective.flows_left == 0) collective_over(collective);
      break;
    }
  }
}

void PlanEvents::sent(int rank) {
  RankState& sender = state_[static_cast<size_t>(rank)];
  ++sender.delivered;
  if ((sender.wait == Wait::delivery || sender.wait == Wait::drain) && sender.delivered == sender.issued) wake(rank);
}

// The receiver takes it if it is waiting for it (its pair's oldest).
void PlanEvents::mark_arrived(const TransferOwner& owner) {
  PairQueue& queue = *owner.queue;
  queue.arrived[static_cast<size_t>(owner.sequence - queue.taken)] = true;
  RankState& receiver = state_[static_cast<size_t>(owner.to)];
  if (receiver.wait == Wait::arrival && receiver.waiting_step->peer == owner.from && queue.arrived.front()) {
    queue.arrived.pop_front();
    ++queue.taken;
    wake(owner.to);
  }
}

}  // namespace treering::sim::detail
