#include "treering/topologies/summary.hpp"

#include <algorithm>
#include <cstdio>

#include "treering/topologies/units.hpp"

namespace treering::topologies {
namespace {

RouteSummary summarize_route(const Topology& topology, int src_gpu, int dst_gpu) {
  Route route = topology.route(src_gpu, dst_gpu);
  return {topology.device(topology.gpu_device(src_gpu)).name, topology.device(topology.gpu_device(dst_gpu)).name,
          static_cast<int>(route.links.size()), route.latency_s, route.bottleneck_Bps};
}

GroupSummary summarize_group(const NodeGroup& group, const GpuModel& gpu) {
  GroupSummary summary{group.name,
                       group.count,
                       group.gpu_model,
                       to_string(gpu.architecture),
                       to_string(group.host_cpu),
                       group.gpus_per_node,
                       "",
                       "none",
                       0,
                       0};
  const Fabric& fabric = group.fabric;
  std::string latency = format_duration(fabric.latency_s);
  switch (fabric.type) {
    case FabricType::nvswitch:
      summary.scale_up_per_gpu_Bps = fabric.bandwidth_Bps;
      summary.fabric = "nvswitch " + format_bandwidth(fabric.bandwidth_Bps) + " per GPU, " + latency;
      if (fabric.domain_nodes > 1) summary.fabric += ", " + std::to_string(fabric.domain_nodes) + "-node domain";
      if (fabric.in_switch_reduction) summary.fabric += ", in-switch reduction";
      break;
    case FabricType::mesh:
      summary.scale_up_per_gpu_Bps = fabric.link_bandwidth_Bps * fabric.links_per_peer * (group.gpus_per_node - 1);
      summary.fabric = "mesh " + std::to_string(fabric.links_per_peer) + " x " +
                       format_bandwidth(fabric.link_bandwidth_Bps) + " per GPU pair, " + latency;
      break;
    case FabricType::pcie:
      summary.scale_up_per_gpu_Bps = fabric.bandwidth_Bps;
      summary.fabric = "pcie " + format_bandwidth(fabric.bandwidth_Bps) + " per GPU, " +
                       std::to_string(fabric.pcie_switches) + " switch(es), P2P " + (fabric.p2p ? "on" : "off") + ", " +
                       latency + " per switch";
      break;
  }
  if (group.nics.count > 0) {
    summary.nics = std::to_string(group.nics.count) + " x " + format_bandwidth_bits(group.nics.bandwidth_Bps) + ", " +
                   format_duration(group.nics.latency_s);
    summary.scale_out_per_gpu_Bps = group.nics.count * group.nics.bandwidth_Bps / group.gpus_per_node;
  }
  return summary;
}

// The network as built: with `levels: auto` the number of switch levels comes from the graph.
std::string describe_network(const Topology& topology) {
  const Network& network = topology.spec().network;
  if (network.topology == NetworkTopology::none) return "none";
  int levels = 0;
  for (DeviceId id = 0; id < topology.device_count(); ++id) levels = std::max(levels, topology.device(id).level);
  std::string text = to_string(network.topology);
  if (network.topology != NetworkTopology::single_switch) {
    text += ", " + std::to_string(levels) + (levels == 1 ? " level" : " levels");
  }
  if (network.switch_radix > 0) text += ", " + std::to_string(network.switch_radix) + "-port switches";
  if (network.topology != NetworkTopology::single_switch) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, ", %g:1", network.oversubscription);
    text += ratio;
  }
  text += ", " + format_duration(network.hop_latency_s) + " per hop";
  return network.in_network_reduction ? text + ", in-network reduction (SHARP)" : text;
}

int first_gpu_of_domain(const Topology& topology, int domain) {
  for (int node = 0; node < topology.node_count(); ++node) {
    if (topology.node(node).domain == domain) return topology.node(node).first_gpu;
  }
  return -1;
}

// The GPU whose route from GPU 0 has the largest latency (then the most links, then the lowest index).
int farthest_gpu_from_first(const Topology& topology) {
  int farthest = 0;
  Route worst;
  for (int gpu = 1; gpu < topology.gpu_count(); ++gpu) {
    Route route = topology.route(0, gpu);
    if (route.latency_s > worst.latency_s ||
        (route.latency_s == worst.latency_s && route.links.size() > worst.links.size())) {
      worst = std::move(route);
      farthest = gpu;
    }
  }
  return farthest;
}

}  // namespace

ClusterSummary summarize(const Topology& topology) {
  const ClusterSpec& spec = topology.spec();
  ClusterSummary summary;
  summary.name = spec.name;
  summary.description = spec.description;
  summary.source = spec.source;
  summary.gpus = topology.gpu_count();
  summary.nodes = topology.node_count();
  summary.domains = topology.domain_count();
  summary.devices = topology.device_count();
  summary.links = topology.link_count();
  summary.gpus_per_node = spec.groups.front().gpus_per_node;
  for (const NodeGroup& group : spec.groups) {
    summary.groups.push_back(summarize_group(group, spec.gpu_models.at(group.gpu_model)));
    if (group.gpus_per_node != summary.gpus_per_node) summary.gpus_per_node = 0;
  }
  summary.network = describe_network(topology);
  if (summary.gpus > 1 && topology.domain_of_gpu(1) == topology.domain_of_gpu(0)) {
    summary.scale_up_route = summarize_route(topology, 0, 1);
  }
  if (summary.domains > 1) {
    summary.scale_out_route = summarize_route(topology, 0, first_gpu_of_domain(topology, 1));
    summary.farthest_route = summarize_route(topology, 0, farthest_gpu_from_first(topology));
  }
  summary.bisection_Bps = topology.bisection_bandwidth_Bps();
  summary.calibrated = spec.calibration.has_value();
  return summary;
}

}  // namespace treering::topologies
