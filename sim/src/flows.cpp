// simulate_flows: the flows as a client of SimGrid's flow network (simgrid_network.hpp), in a child process.
#include "treering/sim/flows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "simgrid_network.hpp"
#include "simulated_units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {
namespace {

namespace topo = treering::topologies;

// Each flow leaves at its start + latency; one that moves nothing (no bytes, or to its own GPU) arrives then.
class FlowsClient final : public detail::FlowClient {
 public:
  FlowsClient(const topo::Topology& topology, const std::vector<Flow>& flows, detail::FlowNetwork& network)
      : topology_(topology), flows_(flows), network_(network), routes_(flows.size()), finish_s(flows.size(), 0.0) {}
  void begin() override {
    for (size_t i = 0; i < flows_.size(); ++i)
      network_.at(flows_[i].start_s + flows_[i].latency_s, {0, static_cast<int>(i)});
  }
  void on_wakeup(detail::Wakeup wakeup) override {
    const size_t i = static_cast<size_t>(wakeup.index);
    const Flow& flow = flows_[i];
    if (!(flow.bytes > 0) || flow.src_gpu == flow.dst_gpu) {
      finish_s[i] = network_.now();
      return;
    }
    routes_[i] = topology_.route(flow.src_gpu, flow.dst_gpu).links;
    network_.start_flow(flow.src_gpu, flow.dst_gpu, routes_[i], static_cast<double>(simulated_size(flow.bytes)),
                        flow.max_rate_Bps * kSizeUnitsPerByte, wakeup.index);
  }
  void on_flow_done(int tag) override { finish_s[static_cast<size_t>(tag)] = network_.now(); }

 private:
  const topo::Topology& topology_;
  const std::vector<Flow>& flows_;
  detail::FlowNetwork& network_;
  std::vector<std::vector<topo::LinkId>> routes_;

 public:
  std::vector<double> finish_s;
};

}  // namespace

FlowSimulation simulate_flows(const topo::Topology& topology, const std::vector<Flow>& flows) {
  FlowSimulation result;
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  for (const Flow& flow : flows) {
    const int gpus = topology.gpu_count();
    if (flow.src_gpu < 0 || flow.src_gpu >= gpus || flow.dst_gpu < 0 || flow.dst_gpu >= gpus) {
      throw topologies::InputError("flow between GPUs " + std::to_string(flow.src_gpu) + " and " +
                                   std::to_string(flow.dst_gpu) + ": no such GPU");
    }
    for (double value : {flow.bytes, flow.start_s, flow.latency_s, flow.max_rate_Bps}) {
      if (!(value >= 0) || !std::isfinite(value)) {
        throw topologies::InputError("flow sizes, start times, latencies and rates must be finite and not negative");
      }
    }
    for (topo::LinkId id : topology.route(flow.src_gpu, flow.dst_gpu).links) {
      result.link_bytes[static_cast<size_t>(id)] += flow.bytes;
    }
  }
  if (flows.empty()) return result;
  const std::string bytes = run_in_child([&] {
    detail::SimGridNetwork network(topology, nullptr, 1 + 2.0 * static_cast<double>(flows.size()));
    FlowsClient client(topology, flows, network);
    network.run(client);
    return std::string(reinterpret_cast<const char*>(client.finish_s.data()), client.finish_s.size() * sizeof(double));
  });
  if (bytes.size() != flows.size() * sizeof(double)) throw std::runtime_error("simulator: truncated results");
  result.finish_s.resize(flows.size());
  std::memcpy(result.finish_s.data(), bytes.data(), bytes.size());
  for (double finish : result.finish_s) result.makespan_s = std::max(result.makespan_s, finish);
  return result;
}

}  // namespace treering::sim
