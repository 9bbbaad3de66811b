#include "treering/topologies/cluster.hpp"

namespace treering::topologies {

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

const char* to_string(FabricType type) {
  switch (type) {
    case FabricType::nvswitch: return "nvswitch";
    case FabricType::mesh: return "mesh";
    case FabricType::pcie: return "pcie";
  }
  return "?";
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

}  // namespace treering::topologies
