// Scale-out networks: single switch, 2- and 3-level fat trees, rail-optimised leaf/spine.
// Port arithmetic (README "Scale-out networks"): radix R, oversubscription o; a leaf has
// d = floor(R*o/(1+o)) ports down and u = R - d up. Example: R = 64, o = 1 -> d = u = 32;
// o = 3 -> d = 48, u = 16.
#include <algorithm>
#include <cmath>

#include "topology_impl.hpp"

namespace treering::topologies {
namespace {

struct NetworkBuild {
  Topology::Impl& impl;
  const Network& network;
  double switch_link_Bps;
  int down_ports;  // d
  int up_ports;    // u
};

// Adds a switch with the range of leaf ordinals below it; a leaf (level 1) is below itself. Leaves are the
// first switches built, so a leaf's ordinal is its switch index.
DeviceId add_switch(Topology::Impl& impl, const std::string& name, int level, double hop_latency_s,
                    LeafRange below = {-1, -1}) {
  DeviceId id = impl.add_device({DeviceKind::network_switch, name, -1, -1, -1, level, hop_latency_s});
  const int index = static_cast<int>(impl.switches.size());
  impl.switch_index[id] = index;
  impl.switches.push_back(id);
  impl.leaves_below.push_back(level == 1 ? LeafRange{index, index} : below);
  return id;
}

double nic_bandwidth(const Topology::Impl& impl, DeviceId nic) {
  const NodeInfo& node = impl.nodes[impl.graph[nic].node];
  return impl.spec.groups[node.group].nics.bandwidth_Bps;
}

// Leaves are the first switches built, so a leaf's switch index is its ordinal among leaves, and until the
// upper levels are linked every link of a leaf goes down to a NIC. The route key numbers the NIC ports as
// leaf ordinal * d + position on the leaf, the address D-mod-k routing takes apart digit by digit.
void attach_nic(Topology::Impl& impl, DeviceId nic, DeviceId leaf, int down_ports) {
  const long long position = static_cast<long long>(impl.out_links[leaf].size());
  impl.nic_route_key[nic] = static_cast<long long>(impl.switch_index[leaf]) * down_ports + position;
  impl.add_cable(nic, leaf, nic_bandwidth(impl, nic), 0.0, Tier::scale_out);
  impl.nic_leaf[nic] = leaf;
}

[[noreturn]] void too_small(const NetworkBuild& build, const std::string& what, long long capacity) {
  throw InputError(build.network.location, "the network is too small: " + what + " connects at most " +
                                               std::to_string(capacity) + " NIC ports, the cluster has " +
                                               std::to_string(build.impl.nic_ports.size()) +
                                               " (use more levels, larger switches or less oversubscription)");
}

std::string radix_text(const NetworkBuild& build) { return std::to_string(build.network.switch_radix) + "-port"; }

void link_all(NetworkBuild& build, const std::vector<DeviceId>& lower, const std::vector<DeviceId>& upper) {
  for (DeviceId a : lower) {
    for (DeviceId b : upper) build.impl.add_cable(a, b, build.switch_link_Bps, 0.0, Tier::scale_out);
  }
}

std::vector<DeviceId> add_switches(NetworkBuild& build, const std::string& prefix, int count, int level,
                                   LeafRange below = {-1, -1}) {
  std::vector<DeviceId> added;
  for (int i = 0; i < count; ++i) {
    added.push_back(add_switch(build.impl, prefix + std::to_string(i), level, build.network.hop_latency_s, below));
  }
  return added;
}

void build_single_switch(NetworkBuild& build) {
  const int radix = build.network.switch_radix;
  if (radix > 0 && static_cast<long long>(build.impl.nic_ports.size()) > radix) {
    too_small(build, "a single " + radix_text(build) + " switch", radix);
  }
  DeviceId hub = add_switch(build.impl, "switch", 1, build.network.hop_latency_s);
  for (DeviceId nic : build.impl.nic_ports) attach_nic(build.impl, nic, hub, build.down_ports);
}

// NIC ports fill leaves in order, d per leaf. Returns the leaves.
std::vector<DeviceId> fill_leaves(NetworkBuild& build, const std::string& prefix) {
  const long long ports = static_cast<long long>(build.impl.nic_ports.size());
  const int leaf_count = static_cast<int>((ports + build.down_ports - 1) / build.down_ports);
  std::vector<DeviceId> leaves = add_switches(build, prefix, leaf_count, 1);
  for (long long port = 0; port < ports; ++port) {
    attach_nic(build.impl, build.impl.nic_ports[port], leaves[port / build.down_ports], build.down_ports);
  }
  return leaves;
}

// Above the leaves: with 2 levels, u spines each linked to every leaf (at most R leaves); with 3 levels,
// pods of R/2 leaves with u aggregation switches each (every leaf linked to every aggregation switch of its
// pod), and u core groups of R/2 switches, aggregation switch j of every pod linked to each core of group j
// (at most R pods). `auto` takes 2 levels while the leaves fit, 3 beyond.
// `leaves_per_block` leaves serve one block of d ports each (1 for fat-trees; the rail count for rails), which
// is what the capacity in the error message counts in.
void build_upper_levels(NetworkBuild& build, const std::vector<DeviceId>& leaves, const std::string& kind,
                        int leaves_per_block) {
  const long long radix = build.network.switch_radix;
  const long long leaves_per_pod = radix / 2;
  int levels = build.network.levels;
  if (levels == 0) levels = static_cast<long long>(leaves.size()) <= radix ? 2 : 3;
  const long long leaf_limit = levels == 2 ? radix : radix * leaves_per_pod;
  if (static_cast<long long>(leaves.size()) > leaf_limit) {
    too_small(build, "a " + std::to_string(levels) + "-level " + kind + " of " + radix_text(build) + " switches",
              leaf_limit / leaves_per_block * leaves_per_block * build.down_ports);
  }
  if (leaves.size() == 1) return;
  const LeafRange all_leaves{0, static_cast<int>(leaves.size()) - 1};
  if (levels == 2) {
    link_all(build, leaves, add_switches(build, "spine", build.up_ports, 2, all_leaves));
    return;
  }
  const int pods = static_cast<int>((static_cast<long long>(leaves.size()) + leaves_per_pod - 1) / leaves_per_pod);
  std::vector<std::vector<DeviceId>> aggregation(pods);
  for (int pod = 0; pod < pods; ++pod) {
    const long long first = pod * leaves_per_pod;
    const long long last = std::min<long long>(static_cast<long long>(leaves.size()), (pod + 1) * leaves_per_pod);
    aggregation[pod] = add_switches(build, "pod" + std::to_string(pod) + "/agg", build.up_ports, 2,
                                    {static_cast<int>(first), static_cast<int>(last - 1)});
    link_all(build, std::vector<DeviceId>(leaves.begin() + first, leaves.begin() + last), aggregation[pod]);
  }
  if (pods == 1) return;
  for (int j = 0; j < build.up_ports; ++j) {
    std::vector<DeviceId> cores = add_switches(build, "core" + std::to_string(j) + ".", leaves_per_pod, 3, all_leaves);
    for (int pod = 0; pod < pods; ++pod) link_all(build, {aggregation[pod][j]}, cores);
  }
}

void build_fat_tree(NetworkBuild& build) { build_upper_levels(build, fill_leaves(build, "leaf"), "fat-tree", 1); }

// Leaves per rail: NIC r of node k goes to the rail-r leaf of block k / d. Leaves are ordered block by
// block, so a pod of R/2 leaves holds whole blocks (every rail of the same nodes) when rails divide R/2.
void build_rail_optimized(NetworkBuild& build) {
  Topology::Impl& impl = build.impl;
  int rails = 0;
  for (const NodeGroup& group : impl.spec.groups) rails = std::max(rails, group.nics.count);
  const int nodes = static_cast<int>(impl.nodes.size());
  const int blocks = (nodes + build.down_ports - 1) / build.down_ports;
  std::vector<DeviceId> leaves;
  for (int block = 0; block < blocks; ++block) {
    for (int rail = 0; rail < rails; ++rail) {
      leaves.push_back(add_switch(impl, "rail" + std::to_string(rail) + "/leaf" + std::to_string(block), 1,
                                  build.network.hop_latency_s));
    }
  }
  size_t port = 0;  // a node's NICs are consecutive ports
  for (int node = 0; node < nodes; ++node) {
    const int nic_count = impl.spec.groups[impl.nodes[node].group].nics.count;
    for (int rail = 0; rail < nic_count; ++rail, ++port) {
      attach_nic(impl, impl.nic_ports[port], leaves[(node / build.down_ports) * rails + rail], build.down_ports);
    }
  }
  build_upper_levels(build, leaves, "rail-optimized network", std::max(rails, 1));
}

}  // namespace

void build_network(Topology::Impl& impl) {
  const Network& network = impl.spec.network;
  if (network.topology == NetworkTopology::none) {
    if (impl.domains > 1) {
      throw InputError({impl.spec.source, 1, 1}, "the cluster has " + std::to_string(impl.domains) +
                                                     " scale-up domains but no 'network' section to connect them");
    }
    return;
  }
  if (impl.nic_ports.empty()) return;
  double fastest_nic_Bps = 0;
  for (const NodeGroup& group : impl.spec.groups) fastest_nic_Bps = std::max(fastest_nic_Bps, group.nics.bandwidth_Bps);
  const int radix = network.switch_radix;
  // The small epsilon keeps exact ratios exact: 48 * 1.4 / 2.4 is 27.999999999999996 in doubles, and is 28.
  const int down =
      static_cast<int>(std::floor(radix * network.oversubscription / (1.0 + network.oversubscription) + 1e-9));
  NetworkBuild build{impl, network, network.link_bandwidth_Bps > 0 ? network.link_bandwidth_Bps : fastest_nic_Bps,
                     std::max(down, 1), std::max(radix - down, 1)};
  switch (network.topology) {
    case NetworkTopology::single_switch: build_single_switch(build); break;
    case NetworkTopology::fat_tree: build_fat_tree(build); break;
    case NetworkTopology::rail_optimized: build_rail_optimized(build); break;
    case NetworkTopology::none: break;
  }
}

}  // namespace treering::topologies
