// The flow network as an event loop of our own (flow_network.hpp): wake-ups and flow arrivals in time order,
// and the flows' rates shared max-min over their links (shared_links.hpp), settled once per instant. 10-30x
// less work per transfer than SimGrid: no context switches, no activity objects, no sharing solve for a flow
// alone on its links. Events wait in buckets by their exact time, each in the order they were made: the ranks
// of a ring or a collective move in step, so thousands of events share a few distinct times, and finding the
// next costs a lookup among those times, not a heap operation per event. Private to sim.
#pragma once

#include <cstdint>
#include <map>
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
    Wakeup wakeup;  // flow < 0
    int flow;       // a flow's arrival: its SharedLinks id, stale unless `version` is its current one
    std::uint64_t version;
  };
  void schedule(double at_s, Wakeup wakeup, int flow, std::uint64_t version);
  void settle();

  SharedLinks links_;
  std::vector<int> tag_of_flow_;                  // by SharedLinks id
  std::map<double, std::vector<Event>> buckets_;  // by time; within one, in the order made
  std::vector<std::vector<Event>> spare_;         // emptied buckets' storage, for the next times
  std::vector<SharedLinks::Due> due_;
  double now_s_ = 0;
};

}  // namespace treering::sim::detail
