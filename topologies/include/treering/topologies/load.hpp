// Loading cluster descriptions from YAML files, preset names and strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/topologies/settings.hpp"

namespace treering::topologies {

// Parses and checks a cluster description. Throws InputError ("FILE:LINE:COL: error: ...") on any
// problem: syntax, unknown or missing keys, wrong types, bad units, bad values, dangling references.
// Graph-level checks (connectivity, network capacity) happen when a Topology is built from the spec.
ClusterSpec load_cluster_text(std::string_view yaml_text, const std::string& source_name);
ClusterSpec load_cluster_file(const std::string& path);

// The presets compiled into the binary (from topologies/clusters/*.yaml), sorted by name.
struct Preset {
  std::string name;
  std::string description;
  std::string yaml_text;
};
const std::vector<Preset>& cluster_presets();

// A preset name ("dgx-h100") or a path to a YAML file (anything containing '/' or ending in .yaml/.yml).
// An unknown name is an InputError listing the presets.
ClusterSpec load_cluster(const std::string& name_or_path);

// Command-line overrides of a loaded spec.
struct ClusterOverrides {
  // A constructor, not an aggregate: {nodes, gpus_per_node} stays the short way to write the common case.
  ClusterOverrides(std::optional<int> nodes_ = {}, std::optional<int> gpus_per_node_ = {},
                   std::vector<Setting> settings_ = {})
      : nodes(nodes_), gpus_per_node(gpus_per_node_), settings(std::move(settings_)) {}
  std::optional<int> nodes;          // set the node count (clusters with one node group only)
  std::optional<int> gpus_per_node;  // within each group's max_gpus_per_node
  std::vector<Setting> settings;     // --set PATH=VALUE, applied to the file's text first (settings.hpp)
};
// Throws InputError (without a file location: these come from the command line).
void apply_overrides(ClusterSpec& spec, const ClusterOverrides& overrides);

}  // namespace treering::topologies

#include "treering/topologies/topology.hpp"

namespace treering::topologies {

// load_cluster + apply_overrides + the graph: what every command and most tests start from.
Topology build_topology(const std::string& name_or_path, const ClusterOverrides& overrides = {});

// GPU g of a node with `gpus` GPUs and `nics` NICs uses NIC floor(g * nics / gpus): blocks of GPUs
// share a NIC. Example: 8 GPUs, 4 NICs -> 0 0 1 1 2 2 3 3; 4 GPUs, 8 NICs -> 0 2 4 6.
std::vector<int> block_gpu_to_nic(int gpus, int nics);

}  // namespace treering::topologies
