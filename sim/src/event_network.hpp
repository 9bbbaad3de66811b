// The flow network as an event loop of our own (flow_network.hpp): a queue of wake-ups and flow arrivals in
// time order, and the flows' rates shared max-min over their links (shared_links.hpp), settled once per
// instant. 10-30x less work per transfer than SimGrid's actors: no context switches, no activity objects, no
// sharing solve for a flow alone on its links. Private to sim.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "flow_network.hpp"
#include "shared_links.hpp"

namespace treering::sim::detail {

class EventNetwork final : public FlowNetwork {
 public:
  // `link_units_per_s`: per LinkId, its rate (simulated_units.hpp).
  explicit EventNetwork(std::vector<double> link_units_per_s) : links_(std::move(link_units_per_s)) {}

  double now() const override { return now_s_; }
  void at(double time_s, Wakeup wakeup) override { schedule(time_s, wakeup, -1, 0); }
  void start_flow(int src_gpu, int dst_gpu, const std::vector<topologies::LinkId>& links, double units,
                  double cap_units_per_s, int tag) override;
  void run(FlowClient& client) override;
  std::string name() const override { return "event loop"; }

 private:
  struct Event {
    double at_s;
    std::uint64_t order;    // creation order: events at one instant go first-made first
    Wakeup wakeup;          // flow < 0
    int flow;               // a flow's arrival: its SharedLinks id, stale unless `version` is its current one
    std::uint64_t version;
  };
  struct FiresLater {  // the queue's order: the earliest on top, then the first made
    bool operator()(const Event& a, const Event& b) const { return a.at_s != b.at_s ? a.at_s > b.at_s : a.order > b.order; }
  };
  void schedule(double at_s, Wakeup wakeup, int flow, std::uint64_t version) {
    events_.push({at_s, order_++, wakeup, flow, version});
  }
  void settle();

  SharedLinks links_;
  std::vector<int> tag_of_flow_;  // by SharedLinks id
  std::priority_queue<Event, std::vector<Event>, FiresLater> events_;
  std::vector<SharedLinks::Due> due_;
  std::uint64_t order_ = 0;
  double now_s_ = 0;
};

}  // namespace treering::sim::detail
