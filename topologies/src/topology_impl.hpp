// The inside of Topology: a Boost.Graph adjacency_list plus the indices routing needs. Private.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <memory>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::topologies {

// Leaf ordinals [first, last]; every network we build places the leaves below a switch in one such range
// (a leaf: itself; an aggregation switch: its pod; a spine or core: all leaves).
struct LeafRange {
  int first = -1;
  int last = -1;
  bool contains(int leaf) const { return first <= leaf && leaf <= last; }
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, Device, Link>;

struct Topology::Impl {
  ClusterSpec spec;
  Graph graph;
  std::vector<Graph::edge_descriptor> edge_of_link;  // LinkId -> edge
  std::vector<std::vector<LinkId>> out_links;        // DeviceId -> its outgoing links, in creation order

  std::vector<NodeInfo> nodes;
  int domains = 0;
  std::vector<DeviceId> gpu_device;  // GPU index -> device
  std::vector<int> gpu_node;         // GPU index -> node index
  std::vector<DeviceId> gpu_switch;  // GPU -> its NVSwitch or PCIe switch (-1 for mesh)
  std::vector<DeviceId> gpu_nic;     // GPU -> the NIC it uses (-1 without NICs)
  std::vector<DeviceId> node_host;   // node -> host bridge (-1 unless PCIe)

  std::vector<DeviceId> nic_ports;       // NIC devices in port order (group, node, NIC)
  std::vector<int> nic_port_of_device;   // device -> port index (-1 for non-NICs)
  std::vector<DeviceId> nic_leaf;        // device -> the switch a NIC hangs off (-1 otherwise)
  std::vector<long long> nic_route_key;  // device -> D-mod-k address: leaf ordinal * d + position on the leaf
  std::vector<int> switch_index;         // device -> index among network switches (-1 otherwise)
  std::vector<DeviceId> switches;        // network switches by index

  std::vector<LeafRange> leaves_below;  // switch index -> the leaf ordinals reachable going down from it
  // switch index -> its switch neighbours one level up (down), by device id, with the link to each: D-mod-k's
  // candidates when every cable is in service (index_switch_hops fills them once the network is built)
  std::vector<std::vector<std::pair<DeviceId, LinkId>>> up_hops, down_hops;
  std::vector<LinkId> nic_uplink, nic_downlink;  // device -> a NIC's link to its leaf and back (-1 otherwise)
  std::vector<std::vector<LinkId>> gpu_to_nic, nic_to_gpu;  // GPU -> the links to its NIC and back (empty: none)
  std::vector<LinkId> gpu_to_switch, switch_to_gpu;         // GPU -> its links to its NVSwitch and back (-1: none)

  DeviceId add_device(Device device);
  // Adds both directions of a full-duplex cable with the same bandwidth and latency.
  void add_cable(DeviceId a, DeviceId b, double bandwidth_Bps, double latency_s, Tier tier);
  LinkId find_link(DeviceId from, DeviceId to) const;  // throws std::logic_error if absent
};

// Building, in graph_builder.cpp and network_builder.cpp.
void build_nodes(Topology::Impl& impl);
void build_network(Topology::Impl& impl);
void check_connected(const Topology::Impl& impl);
void index_switch_hops(Topology::Impl& impl);

}  // namespace treering::topologies
