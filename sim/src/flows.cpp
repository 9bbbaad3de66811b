// simulate_flows: builds the platform and runs the flows in a child process, results back through a pipe.
#include "treering/sim/flows.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "platform.hpp"

namespace treering::sim {
namespace {

namespace sg4 = simgrid::s4u;
namespace topo = treering::topologies;

int flow_payload = 0;  // what every flow carries (its size is simulated)

// In the child: build the platform, run every flow as a sender and a receiver actor (through a mailbox of its
// own: SimGrid 3.32 honours Comm::set_rate on mailbox transfers, not on host-to-host ones), return the finish
// times.
std::vector<double> run_flows(const topo::Topology& topology, const std::vector<Flow>& flows) {
  SimulatedPlatform platform(topology);
  std::vector<double> finish(flows.size(), 0.0);
  for (size_t i = 0; i < flows.size(); ++i) {
    const bool moves = flows[i].bytes > 0 && flows[i].src_gpu != flows[i].dst_gpu;
    sg4::Mailbox* box = sg4::Mailbox::by_name("flow" + std::to_string(i));
    sg4::Actor::create("flow" + std::to_string(i), platform.host(flows[i].src_gpu), [&, i, moves, box] {
      const Flow& flow = flows[i];
      sg4::this_actor::sleep_until(flow.start_s);
      sg4::this_actor::sleep_for(flow.latency_s);
      if (moves) {
        sg4::CommPtr comm = box->put_init(&flow_payload, simulated_size(flow.bytes));
        if (flow.max_rate_Bps > 0) comm->set_rate(flow.max_rate_Bps * kSizeUnitsPerByte);
        comm->start()->wait();
      }
      finish[i] = sg4::Engine::get_clock();
    });
    if (moves) sg4::Actor::create("sink" + std::to_string(i), platform.host(flows[i].dst_gpu), [box] { box->get<int>(); });
  }
  platform.run();
  return finish;
}

}  // namespace

FlowSimulation simulate_flows(const topo::Topology& topology, const std::vector<Flow>& flows) {
  FlowSimulation result;
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  for (const Flow& flow : flows) {
    const int gpus = topology.gpu_count();
    if (flow.src_gpu < 0 || flow.src_gpu >= gpus || flow.dst_gpu < 0 || flow.dst_gpu >= gpus) {
      throw std::invalid_argument("flow between GPUs " + std::to_string(flow.src_gpu) + " and " +
                                  std::to_string(flow.dst_gpu) + ": no such GPU");
    }
    for (double value : {flow.bytes, flow.start_s, flow.latency_s, flow.max_rate_Bps}) {
      if (!(value >= 0) || !std::isfinite(value)) {
        throw std::invalid_argument("flow sizes, start times, latencies and rates must be finite and not negative");
      }
    }
    for (topo::LinkId id : topology.route(flow.src_gpu, flow.dst_gpu).links) {
      result.link_bytes[static_cast<size_t>(id)] += flow.bytes;
    }
  }
  if (flows.empty()) return result;
  result.finish_s = run_in_child([&] { return run_flows(topology, flows); });
  if (result.finish_s.size() != flows.size()) throw std::runtime_error("simulator: truncated results");
  for (double finish : result.finish_s) result.makespan_s = std::max(result.makespan_s, finish);
  return result;
}

}  // namespace treering::sim
