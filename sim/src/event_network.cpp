// The event loop's flow network (event_network.hpp).
#include "event_network.hpp"

namespace treering::sim::detail {

void EventNetwork::start_flow(int, int, const std::vector<topologies::LinkId>& links, double units, double cap_units_per_s,
                              int tag) {
  const int id = links_.start(links, units, now_s_, cap_units_per_s);
  if (tag_of_flow_.size() <= static_cast<size_t>(id)) tag_of_flow_.resize(static_cast<size_t>(id) + 1);
  tag_of_flow_[static_cast<size_t>(id)] = tag;
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
  while (!events_.empty()) {
    now_s_ = events_.top().at_s;
    instant.clear();
    while (!events_.empty() && events_.top().at_s - now_s_ < kSameInstant_s) {
      instant.push_back(events_.top());
      events_.pop();
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
