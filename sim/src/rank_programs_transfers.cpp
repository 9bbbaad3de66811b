// The ranks' programs (rank_programs.hpp): what they send, and what happens when it arrives.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "rank_programs.hpp"
#include "simulated_units.hpp"

namespace treering::sim::detail {

const std::vector<topologies::LinkId>& RankPrograms::route(int from, int to) {
  const long long key = static_cast<long long>(from) * run_.ranks() + to;
  const auto found = routes_.find(key);
  if (found != routes_.end()) return found->second;
  return routes_[key] = run_.topology().route(run_.gpu(from), run_.gpu(to), down_).links;
}

PairQueue& RankPrograms::incoming(int rank, int from) {
  RankState& state = state_[static_cast<size_t>(rank)];
  if (state.last_sender != from) {
    state.last_sender = from;
    state.last_queue = &pair(from, rank);
  }
  return *state.last_queue;
}

// The ring channel from one run rank to another (of the sender's current group).
RingChannel& RankPrograms::channel(int from, int to) {
  RankState& sender = state_[static_cast<size_t>(from)];
  if (sender.last_channel >= 0 && channels_[static_cast<size_t>(sender.last_channel)].to == to) {
    return channels_[static_cast<size_t>(sender.last_channel)];
  }
  const long long key = static_cast<long long>(from) * run_.ranks() + to;
  const auto found = channel_of_pair_.find(key);
  if (found != channel_of_pair_.end()) {
    sender.last_channel = static_cast<int>(found->second);
    return channels_[found->second];
  }
  const GroupRun& group = group_of(sender);
  RingChannel path;
  path.from = from;
  path.to = to;
  path.cost = &group.model->p2p(sender.local, run_.local_at(to, sender.stage));
  path.links = &route(from, to);
  path.queue = &pair(from, to);
  path.exchanges = group.plan->costs.ring_exchanges_per_step;
  channel_of_pair_[key] = channels_.size();
  sender.last_channel = static_cast<int>(channels_.size());
  channels_.push_back(std::move(path));
  return channels_.back();
}

// The channel takes its next block: the latency first.
void RankPrograms::start_block(RingChannel& path) {
  if (path.queued_bytes.empty()) return;
  path.busy = true;
  path.size_for(path.queued_bytes.front());
  if (path.latency_s > 0) {
    schedule(network_.now() + path.latency_s, channel_latency_over, static_cast<int>(&path - channels_.data()));
  } else {
    move_block(path);
  }
}

void RankPrograms::move_block(RingChannel& path) {
  path.size_for(path.queued_bytes.front());
  path.queued_bytes.pop_front();
  const int index = static_cast<int>(&path - channels_.data());
  start_transfer({TransferKind::ring_block, path.from, path.to, -1, index, path.queue}, *path.links, path.units,
                 path.cap_Bps);
}

void RankPrograms::post_send(const PendingSend& send) {
  RankState& sender = state_[static_cast<size_t>(send.from)];
  const model::DecodeModel::PairCost& cost = run_.group(send.group).model->p2p(send.from_local, send.to_local);
  const double bytes = send.bytes;
  sender.batch_first_start_s = std::min(sender.batch_first_start_s, network_.now());
  start_transfer(
      {TransferKind::phase_send, send.from, send.to, send.phase, 0, &pair(send.from, send.to), 0, 0, send.group},
      route(send.from, send.to), static_cast<double>(simulated_size(bytes * cost.size_factor(bytes))),
      cost.rate_cap_Bps(bytes));
}

// A point-to-point transfer takes its place in its pair's queue, which its receiver takes in order.
// `cap_Bps`: 0, or the most it may move at (a calibrated band's rate, NCCL's limits on a collective's flows).
void RankPrograms::start_transfer(TransferOwner owner, const std::vector<topologies::LinkId>& links, double units,
                                  double cap_Bps) {
  if (owner.queue) {
    owner.sequence = owner.queue->posted++;
    owner.queue->arrived.push_back(false);
  }
  owner.start_s = network_.now();
  if (owner.group < 0) owner.group = state_[static_cast<size_t>(owner.from)].group;
  int tag = static_cast<int>(owners_.size());
  if (free_tags_.empty()) {
    owners_.push_back(owner);
  } else {
    tag = free_tags_.back();
    free_tags_.pop_back();
    owners_[static_cast<size_t>(tag)] = owner;
  }
  network_.start_flow(run_.gpu(owner.from), run_.gpu(owner.to), links, units, cap_Bps * kSizeUnitsPerByte, tag);
  ++transfers_;
}

void RankPrograms::start_flows(int index) {
  CollectiveState& collective = collectives_[static_cast<size_t>(index)];
  const GroupRun& group = run_.group(collective.group);
  collective.flows_left = collective.schedule->flows.size();
  for (const model::CollectiveFlow& flow : collective.schedule->flows) {
    const int from = group.members[static_cast<size_t>(flow.from)], to = group.members[static_cast<size_t>(flow.to)];
    start_transfer({TransferKind::collective_flow, from, to, collective.phase, index, nullptr, 0, 0, collective.group},
                   route(from, to), static_cast<double>(simulated_size(flow.wire_bytes)), flow.max_rate_Bps);
  }
  if (collective.flows_left == 0) collective_over(collective);
}

// Every rank of the group leaves the collective together, as the last flow arrives.
void RankPrograms::collective_over(CollectiveState& collective) {
  const std::vector<int>& members = run_.group(collective.group).members;
  for (size_t local = 0; local < members.size(); ++local) {
    accounts_.note({members[local], ActivityKind::collective, collective.arrival_s[local], network_.now(), -1,
                    collective.phase, collective.group});
  }
  for (int rank : members) wake(rank);
}

void RankPrograms::transfer_arrived(int tag) {
  const TransferOwner owner = owners_[static_cast<size_t>(tag)];
  free_tags_.push_back(tag);
  const double start_s = owner.start_s;
  accounts_.note({owner.from, ActivityKind::send, start_s, network_.now(), owner.to, owner.phase, owner.group});
  switch (owner.kind) {
    case TransferKind::ring_block: {
      accounts_.busy_sending(owner.from, start_s, network_.now());
      RingChannel& path = channels_[static_cast<size_t>(owner.index)];
      path.busy = false;
      start_block(path);
      sent(owner.from);
      mark_arrived(owner);
      break;
    }
    case TransferKind::phase_send: {
      RankState& sender = state_[static_cast<size_t>(owner.from)];
      if (--sender.batch_left == 0)
        accounts_.busy_sending(owner.from, sender.batch_first_start_s, network_.now());  // together
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

void RankPrograms::sent(int rank) {
  RankState& sender = state_[static_cast<size_t>(rank)];
  ++sender.delivered;
  if ((sender.wait == Wait::delivery || sender.wait == Wait::drain) && sender.delivered == sender.issued) wake(rank);
}

// The receiver takes it if it is waiting for it (its pair's oldest).
void RankPrograms::mark_arrived(const TransferOwner& owner) {
  PairQueue& queue = *owner.queue;
  queue.arrived[static_cast<size_t>(owner.sequence - queue.taken)] = true;
  RankState& receiver = state_[static_cast<size_t>(owner.to)];
  if (receiver.wait == Wait::arrival && run_rank_of(receiver, receiver.waiting_step->peer) == owner.from &&
      queue.arrived.front()) {
    queue.arrived.pop_front();
    ++queue.taken;
    wake(owner.to);
  }
}

}  // namespace treering::sim::detail
