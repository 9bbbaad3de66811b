// Deterministic routes between GPUs.
// Inside a scale-up domain: the fabric only (NVSwitch: GPU-switch-GPU; mesh: the direct link; PCIe: up to
// the lowest common switch, or always through the host bridge without P2P). Between domains: GPU -> its NIC
// -> up/down through the network -> NIC -> GPU. Where several next hops are equally short (spines), D-mod-k
// picks one from the destination's address (see network_links).
#include <algorithm>
#include <stdexcept>

#include "topology_impl.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::topologies {
namespace {

void append(const Topology::Impl& impl, std::vector<LinkId>& links, DeviceId from, DeviceId to) {
  links.push_back(impl.find_link(from, to));
}

// Links from a GPU up to its NIC (or, reversed, from the NIC down to the GPU).
void gpu_to_nic_links(const Topology::Impl& impl, int gpu, std::vector<LinkId>& links, bool towards_nic) {
  const DeviceId device = impl.gpu_device[gpu];
  const DeviceId nic = impl.gpu_nic[gpu];
  std::vector<DeviceId> hops{device};
  if (impl.node_host[impl.gpu_node[gpu]] >= 0) {
    hops.push_back(impl.gpu_switch[gpu]);
    hops.push_back(impl.node_host[impl.gpu_node[gpu]]);
  }
  hops.push_back(nic);
  if (!towards_nic) std::reverse(hops.begin(), hops.end());
  for (size_t i = 0; i + 1 < hops.size(); ++i) append(impl, links, hops[i], hops[i + 1]);
}

void intra_domain_links(const Topology::Impl& impl, int src, int dst, std::vector<LinkId>& links) {
  const DeviceId a = impl.gpu_device[src];
  const DeviceId b = impl.gpu_device[dst];
  const NodeInfo& node = impl.nodes[impl.gpu_node[src]];
  const Fabric& fabric = impl.spec.groups[node.group].fabric;
  switch (fabric.type) {
    case FabricType::nvswitch:
      links.push_back(impl.gpu_to_switch[static_cast<size_t>(src)]);
      links.push_back(impl.switch_to_gpu[static_cast<size_t>(dst)]);
      return;
    case FabricType::mesh: append(impl, links, a, b); return;
    case FabricType::pcie: {
      const DeviceId below_a = impl.gpu_switch[src];
      const DeviceId below_b = impl.gpu_switch[dst];
      append(impl, links, a, below_a);
      if (!(fabric.p2p && below_a == below_b)) {
        const DeviceId host = impl.node_host[impl.gpu_node[src]];
        append(impl, links, below_a, host);
        append(impl, links, host, below_b);
      }
      append(impl, links, below_b, b);
      return;
    }
  }
}

// The next switch: among `from`'s switch neighbours one level up (or down) that `accept` (given the neighbour and
// the link to it), in device-id order, the one at (key mod count), after which key /= count (D-mod-k: successive
// levels use successive digits of the destination's address, so a permutation spreads over the links). Returns
// the link to it.
template <typename Accept>
LinkId next_switch(const Topology::Impl& impl, DeviceId from, int level_step, unsigned long long& key,
                   std::vector<std::pair<DeviceId, LinkId>>& candidates, Accept accept) {
  candidates.clear();
  const int level = impl.graph[from].level;
  for (LinkId id : impl.out_links[from]) {
    const DeviceId next = impl.graph[impl.edge_of_link[id]].to;
    if (impl.switch_index[next] >= 0 && impl.graph[next].level == level + level_step && accept(next, id)) {
      candidates.emplace_back(next, id);
    }
  }
  if (candidates.empty()) throw InputError("no route onwards from " + impl.graph[from].name + " (links down?)");
  std::sort(candidates.begin(), candidates.end());
  const LinkId chosen = candidates[key % candidates.size()].second;
  key /= candidates.size();
  return chosen;
}

// Whether the cable of link `id` is in service (`down`: per LinkId, both directions marked; null: all are).
bool in_service(const std::vector<bool>* down, LinkId id) {
  return down == nullptr || !(*down)[static_cast<size_t>(id)];
}

// Whether the destination's leaf can be reached going down from `device` over cables in service. With every
// cable in service, exactly when it lies in the switch's range (the builders make the ranges exact: a leaf is
// below every switch whose range holds it).
bool reaches_down(const Topology::Impl& impl, DeviceId device, DeviceId target, int target_leaf,
                  const std::vector<bool>* down) {
  if (device == target) return true;
  if (!impl.leaves_below[impl.switch_index[device]].contains(target_leaf)) return false;
  if (down == nullptr) return true;
  for (LinkId id : impl.out_links[device]) {
    const DeviceId next = impl.graph[impl.edge_of_link[id]].to;
    if (impl.switch_index[next] >= 0 && impl.graph[next].level == impl.graph[device].level - 1 &&
        in_service(down, id) && reaches_down(impl, next, target, target_leaf, down)) {
      return true;
    }
  }
  return false;
}

// Whether the destination's leaf can be reached from `device`, going down, or up first and then down, over
// cables in service (up-down routes, as in a fat tree).
bool reaches_up_down(const Topology::Impl& impl, DeviceId device, DeviceId target, int target_leaf,
                     const std::vector<bool>* down) {
  if (reaches_down(impl, device, target, target_leaf, down)) return true;
  for (LinkId id : impl.out_links[device]) {
    const DeviceId next = impl.graph[impl.edge_of_link[id]].to;
    if (impl.switch_index[next] >= 0 && impl.graph[next].level == impl.graph[device].level + 1 &&
        in_service(down, id) && reaches_up_down(impl, next, target, target_leaf, down)) {
      return true;
    }
  }
  return false;
}

// network_links with every cable in service: the candidates as index_switch_hops sorted them.
void network_links_in_service(const Topology::Impl& impl, DeviceId src_nic, DeviceId dst_nic,
                              std::vector<LinkId>& links) {
  DeviceId current = impl.nic_leaf[src_nic];
  const DeviceId target = impl.nic_leaf[dst_nic];
  const int target_leaf = impl.switch_index[target];
  unsigned long long key = static_cast<unsigned long long>(impl.nic_route_key[dst_nic]);
  auto below = [&](DeviceId device) { return impl.leaves_below[impl.switch_index[device]].contains(target_leaf); };
  links.push_back(impl.nic_uplink[src_nic]);
  while (!below(current)) {
    const auto& hops = impl.up_hops[impl.switch_index[current]];
    if (hops.empty()) throw InputError("no route onwards from " + impl.graph[current].name);
    const auto& [next, id] = hops[key % hops.size()];
    key /= hops.size();
    links.push_back(id);
    current = next;
  }
  thread_local std::vector<std::pair<DeviceId, LinkId>> candidates;  // no allocation per route
  while (current != target) {
    candidates.clear();
    for (const auto& hop : impl.down_hops[impl.switch_index[current]]) {
      if (hop.first == target || below(hop.first)) candidates.push_back(hop);
    }
    if (candidates.empty()) throw InputError("no route onwards from " + impl.graph[current].name);
    const auto& [next, id] = candidates[key % candidates.size()];
    key /= candidates.size();
    links.push_back(id);
    current = next;
  }
  links.push_back(impl.nic_downlink[dst_nic]);
}

// Up from the source's leaf until a switch has the destination's leaf below it, then down to that leaf. With
// cables down, only switches reached over cables in service, from which the leaf can still be reached, count.
void network_links(const Topology::Impl& impl, DeviceId src_nic, DeviceId dst_nic, std::vector<LinkId>& links,
                   const std::vector<bool>* down) {
  DeviceId current = impl.nic_leaf[src_nic];
  if (down == nullptr) return network_links_in_service(impl, src_nic, dst_nic, links);
  const DeviceId target = impl.nic_leaf[dst_nic];
  const int target_leaf = impl.switch_index[target];
  unsigned long long key = static_cast<unsigned long long>(impl.nic_route_key[dst_nic]);
  std::vector<std::pair<DeviceId, LinkId>> candidates;
  auto reaches = [&](DeviceId device) { return reaches_down(impl, device, target, target_leaf, down); };
  append(impl, links, src_nic, current);
  while (!reaches(current)) {
    links.push_back(next_switch(impl, current, +1, key, candidates, [&](DeviceId next, LinkId id) {
      return in_service(down, id) && (down == nullptr || reaches_up_down(impl, next, target, target_leaf, down));
    }));
    current = impl.graph[impl.edge_of_link[links.back()]].to;
  }
  while (current != target) {
    links.push_back(next_switch(impl, current, -1, key, candidates,
                                [&](DeviceId next, LinkId id) { return in_service(down, id) && reaches(next); }));
    current = impl.graph[impl.edge_of_link[links.back()]].to;
  }
  append(impl, links, target, dst_nic);
}

}  // namespace

void index_switch_hops(Topology::Impl& impl) {
  impl.up_hops.assign(impl.switches.size(), {});
  impl.down_hops.assign(impl.switches.size(), {});
  for (size_t index = 0; index < impl.switches.size(); ++index) {
    const DeviceId from = impl.switches[index];
    for (LinkId id : impl.out_links[from]) {
      const DeviceId next = impl.graph[impl.edge_of_link[id]].to;
      if (impl.switch_index[next] < 0) continue;
      const int step = impl.graph[next].level - impl.graph[from].level;
      if (step == 1) impl.up_hops[index].emplace_back(next, id);
      if (step == -1) impl.down_hops[index].emplace_back(next, id);
    }
    std::sort(impl.up_hops[index].begin(), impl.up_hops[index].end());
    std::sort(impl.down_hops[index].begin(), impl.down_hops[index].end());
  }
  impl.gpu_to_switch.assign(impl.gpu_device.size(), -1);
  impl.switch_to_gpu.assign(impl.gpu_device.size(), -1);
  for (size_t gpu = 0; gpu < impl.gpu_device.size(); ++gpu) {
    const NodeInfo& node = impl.nodes[static_cast<size_t>(impl.gpu_node[gpu])];
    if (impl.spec.groups[static_cast<size_t>(node.group)].fabric.type != FabricType::nvswitch) continue;
    impl.gpu_to_switch[gpu] = impl.find_link(impl.gpu_device[gpu], impl.gpu_switch[gpu]);
    impl.switch_to_gpu[gpu] = impl.find_link(impl.gpu_switch[gpu], impl.gpu_device[gpu]);
  }
  impl.gpu_to_nic.assign(impl.gpu_device.size(), {});
  impl.nic_to_gpu.assign(impl.gpu_device.size(), {});
  for (size_t gpu = 0; gpu < impl.gpu_device.size(); ++gpu) {
    if (impl.gpu_nic[gpu] < 0) continue;
    gpu_to_nic_links(impl, static_cast<int>(gpu), impl.gpu_to_nic[gpu], true);
    gpu_to_nic_links(impl, static_cast<int>(gpu), impl.nic_to_gpu[gpu], false);
  }
  impl.nic_uplink.assign(impl.nic_leaf.size(), -1);
  impl.nic_downlink.assign(impl.nic_leaf.size(), -1);
  for (size_t nic = 0; nic < impl.nic_leaf.size(); ++nic) {
    if (impl.nic_leaf[nic] < 0) continue;
    impl.nic_uplink[nic] = impl.find_link(static_cast<DeviceId>(nic), impl.nic_leaf[nic]);
    impl.nic_downlink[nic] = impl.find_link(impl.nic_leaf[nic], static_cast<DeviceId>(nic));
  }
}

Route Topology::route(int src_gpu, int dst_gpu) const { return route(src_gpu, dst_gpu, nullptr); }

namespace {

// A route's latency (links plus the devices passed through, not the source) and bottleneck, its links given.
void measure_route(const Topology::Impl& impl, Route& route) {
  route.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < route.links.size(); ++i) {
    const Link& hop = impl.graph[impl.edge_of_link[static_cast<size_t>(route.links[i])]];
    route.latency_s += hop.latency_s;
    if (i > 0) route.latency_s += impl.graph[static_cast<Graph::vertex_descriptor>(hop.from)].latency_s;
    route.bottleneck_Bps = std::min(route.bottleneck_Bps, hop.bandwidth_Bps);
  }
}

}  // namespace

Route Topology::route_through_nics(int src_gpu, int dst_gpu) const {
  const Impl& impl = *impl_;
  const int gpus = static_cast<int>(impl.gpu_device.size());
  if (src_gpu < 0 || src_gpu >= gpus || dst_gpu < 0 || dst_gpu >= gpus) {
    throw std::out_of_range("route: GPU index outside [0, " + std::to_string(gpus) + ")");
  }
  if (impl.gpu_nic[src_gpu] < 0 || impl.gpu_nic[dst_gpu] < 0) {
    throw InputError("no route through NICs from GPU " + std::to_string(src_gpu) + " to GPU " +
                     std::to_string(dst_gpu) + ": one of them has no NIC");
  }
  Route route;
  const std::vector<LinkId>& up = impl.gpu_to_nic[static_cast<size_t>(src_gpu)];
  route.links.insert(route.links.end(), up.begin(), up.end());
  if (impl.gpu_nic[src_gpu] != impl.gpu_nic[dst_gpu])
    network_links(impl, impl.gpu_nic[src_gpu], impl.gpu_nic[dst_gpu], route.links, nullptr);
  const std::vector<LinkId>& down = impl.nic_to_gpu[static_cast<size_t>(dst_gpu)];
  route.links.insert(route.links.end(), down.begin(), down.end());
  measure_route(impl, route);
  return route;
}

Route Topology::route(int src_gpu, int dst_gpu, const std::vector<bool>* cables_down) const {
  const Impl& impl = *impl_;
  const int gpus = static_cast<int>(impl.gpu_device.size());
  if (src_gpu < 0 || src_gpu >= gpus || dst_gpu < 0 || dst_gpu >= gpus) {
    throw std::out_of_range("route: GPU index outside [0, " + std::to_string(gpus) + ")");
  }
  Route route;
  if (src_gpu == dst_gpu) return route;
  route.links.reserve(12);
  if (domain_of_gpu(src_gpu) == domain_of_gpu(dst_gpu)) {
    intra_domain_links(impl, src_gpu, dst_gpu, route.links);
  } else {
    if (impl.gpu_nic[src_gpu] < 0 || impl.gpu_nic[dst_gpu] < 0) {
      throw InputError("no route from GPU " + std::to_string(src_gpu) + " to GPU " + std::to_string(dst_gpu) +
                       ": one of them has no NIC");
    }
    const std::vector<LinkId>& up = impl.gpu_to_nic[static_cast<size_t>(src_gpu)];
    route.links.insert(route.links.end(), up.begin(), up.end());
    network_links(impl, impl.gpu_nic[src_gpu], impl.gpu_nic[dst_gpu], route.links, cables_down);
    const std::vector<LinkId>& down = impl.nic_to_gpu[static_cast<size_t>(dst_gpu)];
    route.links.insert(route.links.end(), down.begin(), down.end());
  }
  for (LinkId id : route.links) {  // inside a node and to its NIC there is one way only
    if (!in_service(cables_down, id)) {
      throw InputError("no route from GPU " + std::to_string(src_gpu) + " to GPU " + std::to_string(dst_gpu) + ": " +
                       impl.graph[link(id).from].name + " - " + impl.graph[link(id).to].name +
                       " is down and has no alternative");
    }
  }
  measure_route(impl, route);
  return route;
}

}  // namespace treering::topologies
