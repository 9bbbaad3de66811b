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

// In the child: build the platform, run every flow as an actor, return the finish times.
std::vector<double> run_flows(const topo::Topology& topology, const std::vector<Flow>& flows) {
  SimulatedPlatform platform(topology);
  std::vector<double> finish(flows.size(), 0.0);
  for (size_t i = 0; i < flows.size(); ++i) {
    sg4::Actor::create("flow" + std::to_string(i), platform.host(flows[i].src_gpu), [&, i] {
      const Flow& flow = flows[i];
      sg4::this_actor::sleep_until(flow.start_s);
      sg4::this_actor::sleep_for(flow.latency_s);
      if (flow.bytes > 0 && flow.src_gpu != flow.dst_gpu) {
        sg4::Comm::sendto(platform.host(flow.src_gpu), platform.host(flow.dst_gpu),
                          simulated_size(flow.bytes));
      }
      finish[i] = sg4::Engine::get_clock();
    });
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
    for (double value : {flow.bytes, flow.start_s, flow.latency_s}) {
      if (!(value >= 0) || !std::isfinite(value)) {
        throw std::invalid_argument("flow sizes, start times and latencies must be finite and not negative");
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
