#include "treering/topologies/topology.hpp"

#include <stdexcept>

#include "topology_impl.hpp"

namespace treering::topologies {

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu: return "gpu";
    case DeviceKind::nic: return "nic";
    case DeviceKind::nvswitch: return "nvswitch";
    case DeviceKind::pcie_switch: return "pcie-switch";
    case DeviceKind::host_bridge: return "host-bridge";
    case DeviceKind::network_switch: return "switch";
  }
  return "?";
}

const char* to_string(Tier tier) { return tier == Tier::scale_up ? "scale-up" : "scale-out"; }

namespace {

// NodeGroup::shared_device: each of the P virtual ranks gets 1/P of the GPU model and of the fabric's bandwidth,
// under a model of its own ("H100 / 4"). Example: an H100 (3.35 TB/s) shared by 4 ranks: 0.84 TB/s each.
void share_devices(ClusterSpec& spec) {
  for (NodeGroup& group : spec.groups) {
    if (!group.shared_device || group.shared_by > 0) continue;
    const int ranks = group.gpus_per_node;
    GpuModel share = spec.gpu_models.at(group.gpu_model);
    share.name = group.gpu_model + " / " + std::to_string(ranks);
    share.hbm_bandwidth_Bps /= ranks;
    share.hbm_capacity_bytes /= ranks;
    share.peak_fp16_flops /= ranks;
    spec.gpu_models[share.name] = share;
    group.gpu_model = share.name;
    for (double* bandwidth : {&group.fabric.bandwidth_Bps, &group.fabric.link_bandwidth_Bps,
                              &group.fabric.host_bandwidth_Bps, &group.fabric.p2p_channel_bandwidth_Bps}) {
      *bandwidth /= ranks;
    }
    group.shared_by = ranks;
  }
}

}  // namespace

Topology::Topology(ClusterSpec spec) : impl_(std::make_unique<Impl>()) {
  share_devices(spec);
  impl_->spec = std::move(spec);
  build_nodes(*impl_);
  build_network(*impl_);
  check_connected(*impl_);
  index_switch_hops(*impl_);
}

Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

const ClusterSpec& Topology::spec() const { return impl_->spec; }
int Topology::gpu_count() const { return static_cast<int>(impl_->gpu_device.size()); }
int Topology::node_count() const { return static_cast<int>(impl_->nodes.size()); }
int Topology::domain_count() const { return impl_->domains; }
int Topology::device_count() const { return static_cast<int>(boost::num_vertices(impl_->graph)); }
int Topology::link_count() const { return static_cast<int>(impl_->edge_of_link.size()); }

DeviceId Topology::find_device(const std::string& name) const {
  for (DeviceId id = 0; id < device_count(); ++id) {
    if (impl_->graph[static_cast<Graph::vertex_descriptor>(id)].name == name) return id;
  }
  return -1;
}

const Device& Topology::device(DeviceId id) const {
  if (id < 0 || id >= device_count()) throw std::out_of_range("device id " + std::to_string(id));
  return impl_->graph[static_cast<Graph::vertex_descriptor>(id)];
}

const Link& Topology::link(LinkId id) const {
  if (id < 0 || id >= link_count()) throw std::out_of_range("link id " + std::to_string(id));
  return impl_->graph[impl_->edge_of_link[static_cast<size_t>(id)]];
}

const NodeInfo& Topology::node(int node_index) const { return impl_->nodes.at(static_cast<size_t>(node_index)); }
DeviceId Topology::gpu_device(int gpu) const { return impl_->gpu_device.at(static_cast<size_t>(gpu)); }
int Topology::node_of_gpu(int gpu) const { return impl_->gpu_node.at(static_cast<size_t>(gpu)); }
int Topology::domain_of_gpu(int gpu) const { return impl_->nodes[impl_->gpu_node.at(static_cast<size_t>(gpu))].domain; }

const std::vector<LinkId>& Topology::out_links(DeviceId id) const {
  return impl_->out_links.at(static_cast<size_t>(id));
}

}  // namespace treering::topologies
