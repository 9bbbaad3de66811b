// The event loop's flow network (event_network.hpp).
#include "event_network.hpp"

namespace treering::sim::detail {

void EventNetwork::start_flow(int, int, const std::vector<topologies::LinkId>& links, double units,
                              double cap_units_per_s, int tag) {
  const int id = links_.start(links, units, now_s_, cap_units_per_s);
  if (tag_of_flow_.size() <= static_cast<size_t>(id)) tag_of_flow_.resize(static_cast<size_t>(id) + 1);
  tag_of_flow_[static_cast<size_t>(id)] = tag;
}

void EventNetwork::schedule(double at_s, Wakeup wakeup, int flow, std::uint64_t version) {
  auto [bucket, added] = buckets_.try_emplace(at_s);
  if (added && !spare_.empty()) {
    bucket->second.swap(spare_.back());
    spare_.pop_back();
  }
  bucket->second.push_back({wakeup, flow, version});
}

// The rates of what started and ended this instant, and when each changed flow now arrives.
void EventNetwork::settle() {
  due_.clear();
  links_.settle(now_s_, due_);
  for (const SharedLinks::Due& d : due_) schedule(d.end_s, {}, d.id, d.version);
}

void EventNetwork::run(FlowClient& client) {
  client.begin();
  settle();
  std::vector<Event> instant;
  while (!buckets_.empty()) {  // an instant: every bucket within kSameInstant_s of the first, in time order
    now_s_ = buckets_.begin()->first;
    instant.clear();
    while (!buckets_.empty() && buckets_.begin()->first - now_s_ < kSameInstant_s) {
      std::vector<Event>& events = buckets_.begin()->second;
      instant.insert(instant.end(), events.begin(), events.end());
      events.clear();
      spare_.push_back(std::move(events));
      buckets_.erase(buckets_.begin());
    }
    for (const Event& event : instant) {
      if (event.flow < 0) {
        client.on_wakeup(event.wakeup);
      } else if (links_.current(event.flow, event.version)) {
        links_.end(event.flow);
        client.on_flow_done(tag_of_flow_[static_cast<size_t>(event.flow)]);
      }
    }
    settle();
  }
}

}  // namespace treering::sim::detail
