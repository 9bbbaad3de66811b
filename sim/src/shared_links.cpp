// Max-min fair shares of links between transfers, settled once per instant (shared_links.hpp).
#include "shared_links.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace treering::sim::detail {

using topologies::LinkId;

SharedLinks::SharedLinks(std::vector<double> link_units_per_s)
    : link_units_per_s_(std::move(link_units_per_s)),
      on_link_(link_units_per_s_.size()),
      live_on_link_(link_units_per_s_.size(), 0),
      link_marked_(link_units_per_s_.size(), 0),
      link_with_ended_(link_units_per_s_.size(), 0),
      link_stamp_(link_units_per_s_.size(), 0),
      left_units_per_s_(link_units_per_s_.size(), 0.0),
      unfixed_(link_units_per_s_.size(), 0),
      entry_version_(link_units_per_s_.size(), 0) {}

int SharedLinks::start(const std::vector<LinkId>& links, double units, double now_s, double cap_units_per_s) {
  int id = static_cast<int>(moving_.size());
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    moving_.emplace_back();
    transfer_stamp_.push_back(0);
  }
  Moving& transfer = moving_[static_cast<size_t>(id)];
  transfer.links = &links;
  transfer.remaining_units = units;
  transfer.units_per_s = 0;
  transfer.updated_s = transfer.start_s = now_s;
  transfer.cap_units_per_s = cap_units_per_s > 0 ? cap_units_per_s : 0.0;
  ++transfer.version;
  transfer.live = true;
  for (LinkId link : links) {
    on_link_[static_cast<size_t>(link)].push_back(id);
    ++live_on_link_[static_cast<size_t>(link)];
  }
  started_.push_back(id);
  return id;
}

void SharedLinks::end(int id) {
  Moving& transfer = moving_[static_cast<size_t>(id)];
  transfer.live = false;
  ++transfer.version;
  for (LinkId link : *transfer.links) {
    if (!link_with_ended_[static_cast<size_t>(link)]) {  // its list drops the transfer at the next settle
      link_with_ended_[static_cast<size_t>(link)] = 1;
      with_ended_.push_back(link);
    }
    if (--live_on_link_[static_cast<size_t>(link)] > 0) mark_changed(link);  // and the others there get new shares
  }
  ended_.push_back(id);
}

void SharedLinks::mark_changed(LinkId id) {
  if (link_marked_[static_cast<size_t>(id)]) return;
  link_marked_[static_cast<size_t>(id)] = 1;
  marked_.push_back(id);
}

void SharedLinks::drop_ended(LinkId id) {
  std::vector<int>& list = on_link_[static_cast<size_t>(id)];
  list.erase(std::remove_if(list.begin(), list.end(), [&](int t) { return !moving_[static_cast<size_t>(t)].live; }),
             list.end());
}

// The links and live transfers connected to the marked links.
void SharedLinks::gather_affected() {
  component_links_.clear();
  component_transfers_.clear();
  ++stamp_;
  auto visit = [&](LinkId id) {
    if (link_stamp_[static_cast<size_t>(id)] == stamp_) return;
    link_stamp_[static_cast<size_t>(id)] = stamp_;
    component_links_.push_back(id);
  };
  for (LinkId id : marked_) visit(id);
  for (size_t next = 0; next < component_links_.size(); ++next) {
    for (int t : on_link_[static_cast<size_t>(component_links_[next])]) {
      if (transfer_stamp_[static_cast<size_t>(t)] == stamp_) continue;
      transfer_stamp_[static_cast<size_t>(t)] = stamp_;
      component_transfers_.push_back(t);
      for (LinkId id : *moving_[static_cast<size_t>(t)].links) visit(id);
    }
  }
}

void SharedLinks::push_link(LinkId id) {
  const auto i = static_cast<size_t>(id);
  ++entry_version_[i];
  if (unfixed_[i] <= 0) return;
  heap_.push_back({left_units_per_s_[i] / unfixed_[i], id, entry_version_[i]});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

// Whether every transfer of the component has a cap and every link carries the sum of its transfers' caps: a
// collective's flows held to NCCL's rates below the links' (collective_flows.hpp), say.
bool SharedLinks::caps_fit() const {
  for (LinkId id : component_links_) {
    double sum = 0;
    for (int t : on_link_[static_cast<size_t>(id)]) {
      const double cap = moving_[static_cast<size_t>(t)].cap_units_per_s;
      if (!(cap > 0)) return false;
      sum += cap;
    }
    if (sum > link_units_per_s_[static_cast<size_t>(id)]) return false;
  }
  return true;
}

// Progressive filling over the component (a closed set: every live transfer on its links).
void SharedLinks::fill_progressively(double now_s) {
  previous_units_per_s_.clear();
  for (int t : component_transfers_) {
    Moving& transfer = moving_[static_cast<size_t>(t)];
    transfer.remaining_units -= transfer.units_per_s * (now_s - transfer.updated_s);
    transfer.updated_s = now_s;
    previous_units_per_s_.push_back(transfer.units_per_s);
    transfer.units_per_s = -1;  // not fixed yet
  }
  if (caps_fit()) {  // every transfer runs at its cap: the max-min fair shares, without the heap
    for (int t : component_transfers_)
      moving_[static_cast<size_t>(t)].units_per_s = moving_[static_cast<size_t>(t)].cap_units_per_s;
    return;
  }
  heap_.clear();
  for (LinkId id : component_links_) {
    left_units_per_s_[static_cast<size_t>(id)] = link_units_per_s_[static_cast<size_t>(id)];
    unfixed_[static_cast<size_t>(id)] = live_on_link_[static_cast<size_t>(id)];
    push_link(id);
  }
  for (int t : component_transfers_) {
    const double cap = moving_[static_cast<size_t>(t)].cap_units_per_s;
    if (cap > 0) {
      heap_.push_back({cap, LinkId{}, 0, t});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  }
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Entry bottleneck = heap_.back();
    heap_.pop_back();
    if (bottleneck.capped >= 0) {  // the cap is the least share left: the transfer runs at it
      if (moving_[static_cast<size_t>(bottleneck.capped)].units_per_s < 0)
        fix(bottleneck.capped, bottleneck.share_units_per_s, LinkId{-1});
      continue;
    }
    if (bottleneck.version != entry_version_[static_cast<size_t>(bottleneck.link)]) continue;  // stale
    for (int t : on_link_[static_cast<size_t>(bottleneck.link)]) {
      if (moving_[static_cast<size_t>(t)].units_per_s < 0) fix(t, bottleneck.share_units_per_s, bottleneck.link);
    }
    ++entry_version_[static_cast<size_t>(bottleneck.link)];
  }
}

// Transfer t runs at units_per_s: its links have that much less for the others (their entries pushed again,
// but for `except`, whose transfers are being fixed at the same share).
void SharedLinks::fix(int t, double units_per_s, LinkId except) {
  Moving& transfer = moving_[static_cast<size_t>(t)];
  transfer.units_per_s = units_per_s;
  for (LinkId id : *transfer.links) {
    left_units_per_s_[static_cast<size_t>(id)] -= units_per_s;
    --unfixed_[static_cast<size_t>(id)];
    if (id != except) push_link(id);
  }
}

void SharedLinks::settle(double now_s, std::vector<Due>& due) {
  for (LinkId id : with_ended_) {
    drop_ended(id);
    link_with_ended_[static_cast<size_t>(id)] = 0;
  }
  with_ended_.clear();
  free_ids_.insert(free_ids_.end(), ended_.begin(), ended_.end());
  ended_.clear();
  auto add_due = [&](int t) {
    Moving& transfer = moving_[static_cast<size_t>(t)];
    if (!(transfer.units_per_s > 0)) throw std::logic_error("shared links: a transfer was given no rate");
    due.push_back({t, ++transfer.version, now_s + std::max(0.0, transfer.remaining_units) / transfer.units_per_s});
  };
  for (int t : started_) {  // alone on every link: its slowest link's rate, nobody else's changes
    Moving& transfer = moving_[static_cast<size_t>(t)];
    bool alone = true;
    double units_per_s = std::numeric_limits<double>::infinity();  // no links (a rank to itself): at once
    for (LinkId id : *transfer.links) {
      alone = alone && live_on_link_[static_cast<size_t>(id)] == 1 && !link_marked_[static_cast<size_t>(id)];
      units_per_s = std::min(units_per_s, link_units_per_s_[static_cast<size_t>(id)]);
    }
    if (transfer.cap_units_per_s > 0) units_per_s = std::min(units_per_s, transfer.cap_units_per_s);
    if (alone) {
      transfer.units_per_s = units_per_s;
      add_due(t);
    } else {
      for (LinkId id : *transfer.links) mark_changed(id);
    }
  }
  started_.clear();
  if (marked_.empty()) return;
  gather_affected();
  fill_progressively(now_s);
  for (size_t i = 0; i < component_transfers_.size(); ++i) {  // a rate unchanged keeps its due (no stale event)
    const int t = component_transfers_[i];
    if (moving_[static_cast<size_t>(t)].units_per_s != previous_units_per_s_[i]) add_due(t);
  }
  for (LinkId id : marked_) link_marked_[static_cast<size_t>(id)] = 0;
  marked_.clear();
}

}  // namespace treering::sim::detail
