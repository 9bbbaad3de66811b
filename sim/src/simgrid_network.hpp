// The flow network as SimGrid 3.32 runs it (flow_network.hpp): the platform of the topology (platform.hpp), one
// actor that runs the client and sleeps until its next wake-up or a flow's arrival, and for every flow a pair of
// actors, the sender on its GPU's host and the receiver on the other's, through a mailbox of its own (SimGrid
// 3.32 honours a rate cap on mailbox transfers only). SimGrid's CM02 model shares the links. Costs two actors
// (16 KiB stacks) per flow under way. Private to sim; run it in a child process (run_in_child): SimGrid keeps one
// engine per process.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <queue>
#include <string>
#include <vector>

#include "flow_network.hpp"
#include "platform.hpp"

namespace treering::sim::detail {

class SimGridNetwork final : public FlowNetwork {
 public:
  // `degradation` (may be null) as SimulatedPlatform takes it; it must outlive the network. `actors`: the most
  // that will live at once (1 + 2 x the flows under way), for their guard pages (platform.hpp).
  SimGridNetwork(const topologies::Topology& topology, const Degradation* degradation, double actors);

  double now() const override;
  void at(double time_s, Wakeup wakeup) override { timers_.push({time_s, order_++, wakeup}); }
  void start_flow(int src_gpu, int dst_gpu, const std::vector<topologies::LinkId>& links, double units,
                  double cap_units_per_s, int tag) override;
  void run(FlowClient& client) override;
  std::string name() const override;

 private:
  struct Timer {
    double at_s;
    std::uint64_t order;
    Wakeup wakeup;
  };
  struct FiresLater {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.at_s != b.at_s ? a.at_s > b.at_s : a.order > b.order;
    }
  };
  void drive(FlowClient& client);
  bool handle_instant(FlowClient& client);  // false: nothing was due

  SimulatedPlatform platform_;
  std::priority_queue<Timer, std::vector<Timer>, FiresLater> timers_;
  std::uint64_t order_ = 0;
  std::deque<int> arrived_;  // tags of the flows that arrived since the driver last looked
  long long in_flight_ = 0;
  simgrid::s4u::SemaphorePtr wake_driver_;  // released at each arrival
  std::exception_ptr failure_;
};

}  // namespace treering::sim::detail
