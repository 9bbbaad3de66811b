// A SimGrid network zone whose routes come from the topology graph, on demand: no routing table, so memory
// grows with devices and links, not with GPUs squared (sim/README.md has the measurements). Private to sim.
#pragma once

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <unordered_map>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::sim {

class TreeringZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  TreeringZone(const std::string& name, const topologies::Topology& topology, const std::vector<bool>* cables_down)
      : NetZoneImpl(name), topology_(topology), cables_down_(cables_down) {}

  // Host netpoint id -> GPU index, and topology LinkId -> SimGrid link, filled while building.
  std::unordered_map<unsigned long, int> gpu_of_netpoint;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    const topologies::Route route =
        topology_.route(gpu_of_netpoint.at(src->id()), gpu_of_netpoint.at(dst->id()), cables_down_);
    for (topologies::LinkId id : route.links) into->link_list_.push_back(links.at(static_cast<size_t>(id)));
    (void)latency;  // links have no latency: flows wait theirs themselves (fair sharing, see sim/README.md)
  }

 private:
  const topologies::Topology& topology_;
  const std::vector<bool>* cables_down_;  // null: every cable in service
};

}  // namespace treering::sim
