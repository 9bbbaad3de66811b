// Devices and links inside nodes and NVLink domains.
#include <boost/graph/connected_components.hpp>
#include <boost/graph/undirected_graph.hpp>

#include <stdexcept>

#include "topology_impl.hpp"

namespace treering::topologies {

DeviceId Topology::Impl::add_device(Device device) {
  DeviceId id = static_cast<DeviceId>(boost::add_vertex(std::move(device), graph));
  out_links.emplace_back();
  nic_port_of_device.push_back(-1);
  nic_leaf.push_back(-1);
  nic_route_key.push_back(-1);
  switch_index.push_back(-1);
  return id;
}

void Topology::Impl::add_cable(DeviceId a, DeviceId b, double bandwidth_Bps, double latency_s, Tier tier) {
  LinkId forward = static_cast<LinkId>(edge_of_link.size());
  LinkId backward = forward + 1;
  edge_of_link.push_back(boost::add_edge(a, b, Link{a, b, bandwidth_Bps, latency_s, tier, backward}, graph).first);
  edge_of_link.push_back(boost::add_edge(b, a, Link{b, a, bandwidth_Bps, latency_s, tier, forward}, graph).first);
  out_links[a].push_back(forward);
  out_links[b].push_back(backward);
}

LinkId Topology::Impl::find_link(DeviceId from, DeviceId to) const {
  for (LinkId id : out_links[from]) {
    if (graph[edge_of_link[id]].to == to) return id;
  }
  throw std::logic_error("no link from " + graph[from].name + " to " + graph[to].name);
}

namespace {

struct NodeBuild {
  const NodeGroup& group;
  int node_index;
  std::string name;
  int domain;
  DeviceId domain_switch;  // NVSwitch shared by the domain, or -1
};

void build_fabric(Topology::Impl& impl, const NodeBuild& node, const std::vector<DeviceId>& gpus) {
  const Fabric& fabric = node.group.fabric;
  switch (fabric.type) {
    case FabricType::nvswitch:
      for (DeviceId gpu : gpus) {
        impl.add_cable(gpu, node.domain_switch, fabric.bandwidth_Bps, 0.0, Tier::scale_up);
        impl.gpu_switch.push_back(node.domain_switch);
      }
      break;
    case FabricType::mesh:
      for (size_t a = 0; a < gpus.size(); ++a) {
        for (size_t b = a + 1; b < gpus.size(); ++b) {
          impl.add_cable(gpus[a], gpus[b], fabric.link_bandwidth_Bps * fabric.links_per_peer, fabric.latency_s,
                         Tier::scale_up);
        }
        impl.gpu_switch.push_back(-1);
      }
      break;
    case FabricType::pcie: {
      DeviceId host = impl.add_device(
          {DeviceKind::host_bridge, node.name + "/host", node.node_index, node.domain, -1, 0, fabric.latency_s});
      impl.node_host.back() = host;
      std::vector<DeviceId> switches;
      for (int s = 0; s < fabric.pcie_switches; ++s) {
        switches.push_back(impl.add_device({DeviceKind::pcie_switch, node.name + "/pcie" + std::to_string(s),
                                            node.node_index, node.domain, -1, 0, fabric.latency_s}));
        impl.add_cable(switches.back(), host, fabric.host_bandwidth_Bps, 0.0, Tier::scale_up);
      }
      // GPU g sits under switch floor(g * switches / gpus): blocks of consecutive GPUs share a switch.
      for (size_t g = 0; g < gpus.size(); ++g) {
        DeviceId below = switches[g * switches.size() / gpus.size()];
        impl.add_cable(gpus[g], below, fabric.bandwidth_Bps, 0.0, Tier::scale_up);
        impl.gpu_switch.push_back(below);
      }
      break;
    }
  }
}

void build_nics(Topology::Impl& impl, const NodeBuild& node, const std::vector<DeviceId>& gpus) {
  const Nics& nics = node.group.nics;
  std::vector<DeviceId> nic_devices;
  for (int n = 0; n < nics.count; ++n) {
    DeviceId nic = impl.add_device(
        {DeviceKind::nic, node.name + "/nic" + std::to_string(n), node.node_index, node.domain, -1, 0, nics.latency_s});
    impl.nic_port_of_device[nic] = static_cast<int>(impl.nic_ports.size());
    impl.nic_ports.push_back(nic);
    nic_devices.push_back(nic);
    // PCIe nodes: NICs hang off the host bridge; elsewhere each GPU has its own path to its NIC (below).
    if (node.group.fabric.type == FabricType::pcie) {
      impl.add_cable(impl.node_host.back(), nic, nics.bandwidth_Bps, 0.0, Tier::scale_out);
    }
  }
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (nics.count == 0) {
      impl.gpu_nic.push_back(-1);
      continue;
    }
    DeviceId nic = nic_devices[static_cast<size_t>(nics.gpu_to_nic[g])];
    impl.gpu_nic.push_back(nic);
    if (node.group.fabric.type != FabricType::pcie) {
      impl.add_cable(gpus[g], nic, nics.bandwidth_Bps, 0.0, Tier::scale_out);
    }
  }
}

void build_node(Topology::Impl& impl, const NodeBuild& node) {
  NodeInfo info{0, 0, node.domain, static_cast<int>(impl.gpu_device.size()), node.group.gpus_per_node, node.name};
  impl.node_host.push_back(-1);
  std::vector<DeviceId> gpus;
  for (int g = 0; g < node.group.gpus_per_node; ++g) {
    int gpu_index = static_cast<int>(impl.gpu_device.size());
    gpus.push_back(impl.add_device(
        {DeviceKind::gpu, node.name + "/gpu" + std::to_string(g), node.node_index, node.domain, gpu_index, 0, 0.0}));
    impl.gpu_device.push_back(gpus.back());
    impl.gpu_node.push_back(node.node_index);
  }
  build_fabric(impl, node, gpus);
  build_nics(impl, node, gpus);
  impl.nodes.push_back(info);
}

}  // namespace

void build_nodes(Topology::Impl& impl) {
  int node_index = 0;
  for (size_t group_index = 0; group_index < impl.spec.groups.size(); ++group_index) {
    const NodeGroup& group = impl.spec.groups[group_index];
    const int domain_nodes = group.fabric.type == FabricType::nvswitch ? group.fabric.domain_nodes : 1;
    DeviceId domain_switch = -1;
    for (int i = 0; i < group.count; ++i, ++node_index) {
      std::string name = group.name + "-" + std::to_string(i);
      if (i % domain_nodes == 0) {
        ++impl.domains;
        if (group.fabric.type == FabricType::nvswitch) {
          std::string switch_name = domain_nodes > 1
                                        ? group.name + "-domain" + std::to_string(i / domain_nodes) + "/nvswitch"
                                        : name + "/nvswitch";
          domain_switch = impl.add_device({DeviceKind::nvswitch, switch_name, domain_nodes > 1 ? -1 : node_index,
                                           impl.domains - 1, -1, 0, group.fabric.latency_s});
        }
      }
      build_node(impl, {group, node_index, name, impl.domains - 1, domain_switch});
      impl.nodes.back().group = static_cast<int>(group_index);
      impl.nodes.back().index_in_group = i;
    }
  }
}

void check_connected(const Topology::Impl& impl) {
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Undirected undirected(boost::num_vertices(impl.graph));
  for (LinkId id = 0; id < static_cast<LinkId>(impl.edge_of_link.size()); id += 2) {
    const Link& link = impl.graph[impl.edge_of_link[id]];
    boost::add_edge(link.from, link.to, undirected);
  }
  std::vector<int> component(boost::num_vertices(undirected));
  int count = boost::connected_components(undirected, component.data());
  if (count <= 1) return;
  int reference = component[impl.gpu_device.front()];
  for (size_t gpu = 0; gpu < impl.gpu_device.size(); ++gpu) {
    if (component[impl.gpu_device[gpu]] == reference) continue;
    const NodeGroup& group = impl.spec.groups[impl.nodes[impl.gpu_node[gpu]].group];
    const NodeGroup& first_group = impl.spec.groups[impl.nodes.front().group];
    const NodeGroup& blamed = group.nics.count == 0 || first_group.nics.count != 0 ? group : first_group;
    std::string why = blamed.nics.count == 0 ? " (node group '" + blamed.name + "' has no NICs)" : "";
    throw InputError(blamed.location, "the cluster graph is not connected: " + impl.graph[impl.gpu_device[gpu]].name +
                                          " cannot reach " + impl.graph[impl.gpu_device.front()].name + why);
  }
}

}  // namespace treering::topologies
