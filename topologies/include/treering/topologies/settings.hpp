// What-if overrides of a cluster file: `--set PATH=VALUE` replaces one scalar of the YAML text in place
// (comments, layout and every other line kept), before the file is read, so a value is checked as the file's own
// would be and its errors point at the line it replaced.
//
// PATH names a scalar by its keys, dots between, list entries by index: `nodes.0.nics.bandwidth`,
// `network.hop_latency`, `gpu_models.H100-SXM5-80GB.hbm_bandwidth`. A path that does not start at the top of
// the file applies to every node group, GPU model and the network where it exists: `nics.bandwidth=800Gb/s`
// sets every group's NICs, `hbm_bandwidth=4.8TB/s` every GPU model's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace treering::topologies {

struct Setting {
  std::string path;
  std::string value;
};

// "PATH=VALUE". Throws InputError ("--set TEXT: ...") without PATH, '=' or VALUE.
Setting parse_setting(const std::string& text);

// The text with every setting applied in turn. A path whose last key a map of the file lacks adds it there
// (`fabric.domain_nodes=9` to every group's fabric; `nodes.0.nics.count=4`): the loader then checks it as any key
// of the file, so a key the schema does not have is its "unknown key" error, at the map's line. Throws InputError
// naming the setting when its path names no scalar and no map to add to (a missing map, a list where a value
// should be, an index out of range), or the map is written in flow style.
//
// With --nodes / --gpus-per-node (ClusterOverrides), a setting of the same count (`nodes.0.count`, `count`,
// `nodes.0.gpus_per_node`, `gpus_per_node`) is a conflict: check_setting_conflicts refuses it.
std::string apply_settings(std::string_view yaml_text, const std::string& source, const std::vector<Setting>& settings);

// Throws InputError "--set nodes.0.count=4 and --nodes 8 both set the node count: give one" when a setting sets what
// an override (nodes, gpus_per_node; unset: std::nullopt) sets too.
void check_setting_conflicts(const std::vector<Setting>& settings, std::optional<int> nodes,
                             std::optional<int> gpus_per_node);

// The scalars PATH names (shorthand included), as written in the file: what `treering sensitivity` scales.
std::vector<std::string> setting_values(std::string_view yaml_text, const std::string& source, const std::string& path);

// The text with every scalar PATH names (shorthand included) multiplied by `factor` in its own unit: each
// group's value scaled, not all set to one. Throws InputError as apply_settings, or for a value that is not a number.
std::string scale_setting(std::string_view yaml_text, const std::string& source, const std::string& path,
                          double factor);

// A quantity as written ("450GB/s", "1.5us", "0.92") times `factor`, in the same unit: "454.5GB/s".
// Throws InputError when the text does not start with a number.
std::string scale_quantity(const std::string& text, double factor);

// The YAML text of a preset or a file (for editing before it is read). Throws InputError like load_cluster.
struct ClusterSource {
  std::string text;
  std::string name;  // "preset:NAME" or the path, for messages
};
ClusterSource cluster_source(const std::string& name_or_path);

}  // namespace treering::topologies
