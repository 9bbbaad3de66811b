// What a replay asks of a network simulator, and nothing more: the time, a wake-up at a time, and a flow of
// bytes on a route that shares its links with every other flow under way. The ranks' programs
// (rank_programs.hpp) are written once against it; our event loop (event_network.hpp) and SimGrid 3.32
// (simgrid_network.hpp) each implement it, and give the same times to 1e-9 (sim/tests).
//
// The contract both keep:
// - a flow's units move at the max-min fair share of its links' rates among the flows under way on them (CM02
//   with no latency on links: SimGrid's network model as platform.hpp configures it), never above its cap;
//   a flow alone on its route takes units / (slowest link) exactly; a flow of no units arrives at once;
// - events due less than kSameInstant_s after the earliest pending one are handled at its instant (SimGrid's
//   precision/timing); a wake-up or a flow started while handling an instant belongs to it.
// Private to sim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::sim::detail {

// SimGrid's precision/timing (its default): an action due within this of the current instant ends at it.
constexpr double kSameInstant_s = 1e-9;

// A wake-up the client asked for: what it means is the client's business.
struct Wakeup {
  std::uint8_t kind = 0;
  int index = 0;
};

// Who runs on a network: told when the run starts, when a wake-up it asked for is due and when a flow it
// started has arrived (`tag`: the number it gave the flow).
class FlowClient {
 public:
  virtual void begin() = 0;  // at time 0
  virtual void on_wakeup(Wakeup wakeup) = 0;
  virtual void on_flow_done(int tag) = 0;

 protected:
  ~FlowClient() = default;
};

class FlowNetwork {
 public:
  virtual ~FlowNetwork() = default;
  virtual double now() const = 0;
  // `wakeup` at time_s (>= now).
  virtual void at(double time_s, Wakeup wakeup) = 0;
  // A flow of `units` (simulated_units.hpp) from GPU src_gpu to GPU dst_gpu over `links` (the topology's route
  // between them, which must outlive the flow), never faster than cap_units_per_s (0: no cap). `tag` is the
  // client's, unique among its flows under way.
  virtual void start_flow(int src_gpu, int dst_gpu, const std::vector<topologies::LinkId>& links, double units,
                          double cap_units_per_s, int tag) = 0;
  // Runs `client` until nothing is left to happen: no wake-up pending, no flow under way. Rethrows what the
  // client threw.
  virtual void run(FlowClient& client) = 0;
  // "event loop" or "SimGrid 3.32.0".
  virtual std::string name() const = 0;
};

}  // namespace treering::sim::detail
