#include "treering/topologies/cluster.hpp"

namespace treering::topologies {

const SizeBand& band_of(const std::vector<SizeBand>& bands, double bytes) {
  const SizeBand* band = &bands.front();
  for (const SizeBand& b : bands) {
    if (b.from_bytes <= bytes) band = &b;
  }
  return *band;
}

int ClusterSpec::node_count() const {
  int nodes = 0;
  for (const NodeGroup& group : groups) nodes += group.count;
  return nodes;
}

int ClusterSpec::gpu_count() const {
  int gpus = 0;
  for (const NodeGroup& group : groups) gpus += group.count * group.gpus_per_node;
  return gpus;
}

void check_size_limits(const ClusterSpec& spec, const InputLocation& where) {
  long long gpus = 0;
  long long nic_ports = 0;
  for (const NodeGroup& group : spec.groups) {
    gpus += static_cast<long long>(group.count) * group.gpus_per_node;
    nic_ports += static_cast<long long>(group.count) * group.nics.count;
  }
  if (gpus > kMaxClusterGpus) {
    throw InputError(where, "the cluster has " + std::to_string(gpus) + " GPUs; at most " +
                                std::to_string(kMaxClusterGpus) + " are supported");
  }
  if (nic_ports > kMaxClusterNicPorts) {
    throw InputError(where, "the cluster has " + std::to_string(nic_ports) + " NICs; at most " +
                                std::to_string(kMaxClusterNicPorts) + " are supported");
  }
}

const char* to_string(FabricType type) {
  switch (type) {
    case FabricType::nvswitch: return "nvswitch";
    case FabricType::mesh: return "mesh";
    case FabricType::pcie: return "pcie";
  }
  return "?";
}

const char* to_string(GpuArchitecture architecture) {
  switch (architecture) {
    case GpuArchitecture::unknown: return "unknown";
    case GpuArchitecture::volta: return "volta";
    case GpuArchitecture::turing: return "turing";
    case GpuArchitecture::ampere: return "ampere";
    case GpuArchitecture::ada: return "ada";
    case GpuArchitecture::hopper: return "hopper";
    case GpuArchitecture::blackwell: return "blackwell";
    case GpuArchitecture::cdna2: return "cdna2";
    case GpuArchitecture::cdna3: return "cdna3";
  }
  return "?";
}

const char* to_string(HostCpu cpu) {
  switch (cpu) {
    case HostCpu::unknown: return "unknown";
    case HostCpu::intel: return "intel";
    case HostCpu::amd: return "amd";
    case HostCpu::arm: return "arm";
  }
  return "?";
}

std::string to_string(const NcclVersion& version) {
  return "2." + std::to_string(version.minor) + (version.patch < 0 ? "" : "." + std::to_string(version.patch));
}

const char* to_string(NetworkTopology topology) {
  switch (topology) {
    case NetworkTopology::none: return "none";
    case NetworkTopology::single_switch: return "single-switch";
    case NetworkTopology::fat_tree: return "fat-tree";
    case NetworkTopology::rail_optimized: return "rail-optimized";
  }
  return "?";
}

std::vector<std::string> cluster_warnings(const ClusterSpec& spec) {
  std::vector<std::string> warnings;
  for (const NodeGroup& group : spec.groups) {
    const int domain = group.fabric.domain_nodes;
    if (group.fabric.type != FabricType::nvswitch || domain <= 1 || group.count % domain == 0) continue;
    const int full = group.count / domain;
    warnings.push_back("node group '" + group.name + "': " + std::to_string(group.count) + " nodes fill " +
                       std::to_string(full) + " NVLink domain" + (full == 1 ? "" : "s") + " of " +
                       std::to_string(domain) + " nodes and leave a partial one of " +
                       std::to_string(group.count % domain) + " (fabric.domain_nodes)");
  }
  return warnings;
}

}  // namespace treering::topologies
