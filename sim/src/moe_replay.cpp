// simulate_moe_exchange (moe_replay.hpp): every pair's flow at once on the event loop.
#include "treering/sim/moe_replay.hpp"

#include <algorithm>

#include "event_network.hpp"
#include "simulated_units.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {
namespace {

// Starts every flow at the exchange's latency; records when the last one arrives.
class ExchangeClient final : public detail::FlowClient {
 public:
  ExchangeClient(detail::FlowNetwork& network, const std::vector<std::vector<topologies::LinkId>>& routes,
                 const std::vector<model::MoeFlow>& flows, const std::vector<int>& gpus, double latency_s)
      : network_(network), routes_(routes), flows_(flows), gpus_(gpus), latency_s_(latency_s) {}
  void begin() override { network_.at(latency_s_, {0, 0}); }
  void on_wakeup(detail::Wakeup) override {
    last_s = network_.now();
    for (size_t i = 0; i < flows_.size(); ++i) {
      const model::MoeFlow& flow = flows_[i];
      network_.start_flow(gpus_[static_cast<size_t>(flow.from)], gpus_[static_cast<size_t>(flow.to)], routes_[i],
                          static_cast<double>(simulated_size(flow.bytes)), 0.0, static_cast<int>(i));
    }
  }
  void on_flow_done(int) override { last_s = std::max(last_s, network_.now()); }
  double last_s = 0;

 private:
  detail::FlowNetwork& network_;
  const std::vector<std::vector<topologies::LinkId>>& routes_;
  const std::vector<model::MoeFlow>& flows_;
  const std::vector<int>& gpus_;
  double latency_s_;
};

}  // namespace

SimulatedCollective simulate_moe_exchange(const topologies::Topology& topology, const model::CommGroup& group,
                                          const model::MoeExchange& exchange, const ReplayOptions& options) {
  if (options.in_simgrid)
    throw topologies::InputError("the MoE exchanges replay on treering's event loop only (leave out --simgrid)");
  std::vector<int> domains;
  for (int gpu : group.gpus) domains.push_back(topology.domain_of_gpu(gpu));
  const std::vector<model::MoeFlow> flows = model::moe_exchange_flows(domains, exchange);
  std::vector<std::vector<topologies::LinkId>> routes;
  SimulatedCollective out;
  out.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  for (const model::MoeFlow& flow : flows) {
    const int from = group.gpus[static_cast<size_t>(flow.from)], to = group.gpus[static_cast<size_t>(flow.to)];
    routes.push_back(flow.through_nics ? topology.route_through_nics(from, to).links : topology.route(from, to).links);
    for (topologies::LinkId id : routes.back()) out.link_bytes[static_cast<size_t>(id)] += flow.bytes;
  }
  const model::LinkEfficiency efficiency = model::link_efficiency(topology);
  std::vector<double> units_per_s(static_cast<size_t>(topology.link_count()));
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id)
    units_per_s[static_cast<size_t>(id)] = link_units_per_s(topology, efficiency, &options.degradation, id);
  detail::EventNetwork network(std::move(units_per_s));
  ExchangeClient client(network, routes, flows, group.gpus, exchange.latency_s);
  network.run(client);
  out.time_s = flows.empty() ? exchange.latency_s : client.last_s;
  out.flows = static_cast<long long>(flows.size());
  out.engine = network.name();
  ReplayResult loads;  // busiest_links reads the replay's bytes and time
  loads.link_bytes = out.link_bytes;
  loads.latency_s = out.time_s;
  const std::vector<LinkLoad> busiest = busiest_links(topology, loads, 1);
  if (!busiest.empty()) out.busiest_utilisation = busiest.front().utilisation;
  return out;
}

}  // namespace treering::sim
