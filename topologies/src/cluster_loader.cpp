// YAML -> ClusterSpec, with every check that needs only the file (see topologies/README.md).
#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/eventhandler.h>

#include "calibration_loader.hpp"
#include "treering/topologies/load.hpp"
#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

using yaml::StrictMap;
// Bounds far beyond any real system, so that a typo cannot ask for a graph that exhausts memory.
constexpr int kMaxNodes = 1'048'576;   // nodes in a group (also --nodes)
constexpr int kMaxGpusPerNode = 1024;  // GPUs in one node
constexpr int kMaxMeshGpus = 64;       // a full mesh of 64 GPUs already has 2016 links
constexpr int kMaxPorts = 256;         // NICs, PCIe switches, links per peer in one node
constexpr int kMaxRadix = 4096;        // ports of one network switch

// A scalar that must be one of `choices`' names.
template <typename Value, size_t N>
Value read_choice(const std::string& file, const YAML::Node& node, const std::string& key,
                  const std::array<std::pair<const char*, Value>, N>& choices) {
  const std::string text = yaml::scalar_string(file, node, key);
  std::string names;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    names += std::string(names.empty() ? "" : ", ") + name;
  }
  yaml::fail(file, node, "unknown " + key + " '" + text + "' (expected one of " + names + ")");
}

constexpr std::array<std::pair<const char*, GpuArchitecture>, 8> kArchitectures{
    {{"volta", GpuArchitecture::volta},
     {"turing", GpuArchitecture::turing},
     {"ampere", GpuArchitecture::ampere},
     {"ada", GpuArchitecture::ada},
     {"hopper", GpuArchitecture::hopper},
     {"blackwell", GpuArchitecture::blackwell},
     {"cdna2", GpuArchitecture::cdna2},
     {"cdna3", GpuArchitecture::cdna3}}};
constexpr std::array<std::pair<const char*, HostCpu>, 3> kHostCpus{
    {{"intel", HostCpu::intel}, {"amd", HostCpu::amd}, {"arm", HostCpu::arm}}};

GpuModel read_gpu_model(const std::string& file, const std::string& name, const YAML::Node& node) {
  StrictMap map(node, file, "gpu model '" + name + "'",
                {"hbm_bandwidth", "hbm_capacity", "peak_fp16", "launch_overhead", "multiprocessors", "architecture"});
  GpuModel gpu;
  gpu.name = name;
  gpu.hbm_bandwidth_Bps = map.bandwidth_Bps("hbm_bandwidth");
  gpu.hbm_capacity_bytes = map.bytes("hbm_capacity");
  gpu.peak_fp16_flops = map.flops("peak_fp16");
  gpu.launch_overhead_s = map.duration_s("launch_overhead");
  if (map.has("multiprocessors")) gpu.multiprocessors = map.integer("multiprocessors", 1, 100'000);
  if (map.has("architecture"))
    gpu.architecture = read_choice(file, map.required("architecture"), "architecture", kArchitectures);
  return gpu;
}

FabricType read_fabric_type(const std::string& file, const YAML::Node& node, const std::string& what) {
  if (!node.IsMap()) yaml::fail(file, node, "expected a map for " + what + ", got " + yaml::kind_name(node));
  const YAML::Node& type = node["type"];
  if (!type) yaml::fail(file, node, "missing required key 'type' in " + what + " (nvswitch, mesh or pcie)");
  std::string text = yaml::scalar_string(file, type, "type");
  if (text == "nvswitch") return FabricType::nvswitch;
  if (text == "mesh") return FabricType::mesh;
  if (text == "pcie") return FabricType::pcie;
  yaml::fail(file, type, "unknown fabric type '" + text + "' (expected nvswitch, mesh or pcie)");
}

Fabric read_fabric(const std::string& file, const YAML::Node& node, const std::string& group) {
  const std::string what = "the fabric of node group '" + group + "'";
  Fabric fabric;
  fabric.type = read_fabric_type(file, node, what);
  switch (fabric.type) {
    case FabricType::nvswitch: {
      StrictMap map(node, file, what,
                    {"type", "bandwidth", "latency", "domain_nodes", "in_switch_reduction", "p2p_channel_bandwidth"});
      fabric.bandwidth_Bps = map.bandwidth_Bps("bandwidth");
      fabric.latency_s = map.duration_s("latency");
      fabric.domain_nodes = map.integer_or("domain_nodes", 1, kMaxNodes, 1);
      fabric.in_switch_reduction = map.boolean_or("in_switch_reduction", false);
      fabric.p2p_channel_bandwidth_Bps = map.bandwidth_Bps_or("p2p_channel_bandwidth", 0);
      break;
    }
    case FabricType::mesh: {
      StrictMap map(node, file, what, {"type", "link_bandwidth", "links_per_peer", "latency", "p2p_channel_bandwidth"});
      fabric.link_bandwidth_Bps = map.bandwidth_Bps("link_bandwidth");
      fabric.links_per_peer = map.integer_or("links_per_peer", 1, kMaxPorts, 1);
      fabric.latency_s = map.duration_s("latency");
      fabric.p2p_channel_bandwidth_Bps = map.bandwidth_Bps_or("p2p_channel_bandwidth", 0);
      break;
    }
    case FabricType::pcie: {
      StrictMap map(node, file, what,
                    {"type", "bandwidth", "latency", "p2p", "switches", "host_bandwidth", "p2p_channel_bandwidth"});
      fabric.bandwidth_Bps = map.bandwidth_Bps("bandwidth");
      fabric.latency_s = map.duration_s("latency");
      map.required("p2p");
      fabric.p2p = map.boolean_or("p2p", false);
      fabric.pcie_switches = map.integer_or("switches", 1, kMaxPorts, 1);
      fabric.host_bandwidth_Bps = map.bandwidth_Bps_or("host_bandwidth", fabric.bandwidth_Bps);
      fabric.p2p_channel_bandwidth_Bps = map.bandwidth_Bps_or("p2p_channel_bandwidth", 0);
      break;
    }
  }
  return fabric;
}

std::vector<int> read_gpu_to_nic(const std::string& file, const YAML::Node& list, int gpus, int nics) {
  yaml::require_sequence(file, list, "gpu_to_nic");
  std::vector<int> gpu_to_nic;
  for (size_t gpu = 0; gpu < list.size(); ++gpu) {
    const YAML::Node& entry = list[gpu];
    if (static_cast<int>(gpu) >= gpus) {
      yaml::fail(file, entry,
                 "gpu_to_nic names GPU " + std::to_string(gpu) + ", which does not exist (the node has " +
                     std::to_string(gpus) + " GPUs, 0-" + std::to_string(gpus - 1) + ")");
    }
    int nic = yaml::scalar_integer(file, entry, "gpu_to_nic", 0);
    if (nic >= nics) {
      yaml::fail(file, entry,
                 "GPU " + std::to_string(gpu) + " uses NIC " + std::to_string(nic) +
                     ", which does not exist (the node has " + std::to_string(nics) + " NICs)");
    }
    gpu_to_nic.push_back(nic);
  }
  if (static_cast<int>(gpu_to_nic.size()) < gpus) {
    yaml::fail(
        file, list,
        "gpu_to_nic lists " + std::to_string(gpu_to_nic.size()) + " GPUs but the node has " + std::to_string(gpus));
  }
  return gpu_to_nic;
}

Nics read_nics(const std::string& file, const YAML::Node& node, const std::string& group, int gpus) {
  StrictMap map(node, file, "the NICs of node group '" + group + "'", {"count", "bandwidth", "latency", "gpu_to_nic"});
  Nics nics;
  nics.count = map.integer("count", 1, kMaxPorts);
  nics.bandwidth_Bps = map.bandwidth_Bps("bandwidth");
  nics.latency_s = map.duration_s("latency");
  if (YAML::Node list = map.optional("gpu_to_nic")) {
    nics.gpu_to_nic = read_gpu_to_nic(file, list, gpus, nics.count);
    nics.gpu_to_nic_given = true;
  } else {
    nics.gpu_to_nic = block_gpu_to_nic(gpus, nics.count);
  }
  return nics;
}

NodeGroup read_group(const std::string& file, const YAML::Node& node, const ClusterSpec& spec, size_t index) {
  // Name the group in messages when it has a plain name, else by its position in the list.
  const bool named = node.IsMap() && node["name"] && node["name"].IsScalar() && !node["name"].Scalar().empty();
  StrictMap map(
      node, file, named ? "node group '" + node["name"].Scalar() + "'" : "node group " + std::to_string(index + 1),
      {"name", "count", "gpu", "gpus_per_node", "max_gpus_per_node", "fabric", "nics", "shared_device", "host_cpu"});
  NodeGroup group;
  group.location = yaml::location_of(file, node);
  group.name = map.name("name");
  group.count = map.integer("count", 1, kMaxNodes);
  group.gpu_model = map.string("gpu");
  if (!spec.gpu_models.count(group.gpu_model)) {
    yaml::fail(file, map.required("gpu"), "unknown gpu model '" + group.gpu_model + "' (not in gpu_models)");
  }
  if (map.has("host_cpu")) group.host_cpu = read_choice(file, map.required("host_cpu"), "host_cpu", kHostCpus);
  group.gpus_per_node = map.integer("gpus_per_node", 1, kMaxGpusPerNode);
  group.max_gpus_per_node =
      map.integer_or("max_gpus_per_node", group.gpus_per_node, kMaxGpusPerNode, group.gpus_per_node);
  group.fabric = read_fabric(file, map.required("fabric"), group.name);
  if (group.fabric.type == FabricType::mesh && group.max_gpus_per_node > kMaxMeshGpus) {
    yaml::fail(file, map.required(map.has("max_gpus_per_node") ? "max_gpus_per_node" : "gpus_per_node"),
               "a mesh fabric connects at most " + std::to_string(kMaxMeshGpus) + " GPUs per node");
  }
  if (YAML::Node nics = map.optional("nics")) group.nics = read_nics(file, nics, group.name, group.gpus_per_node);
  group.shared_device = map.boolean_or("shared_device", false);
  if (group.shared_device && group.count != 1)
    yaml::fail(file, map.required("count"), "a shared device is one GPU: count must be 1");
  return group;
}

NetworkTopology read_network_topology(const std::string& file, const YAML::Node& node) {
  std::string text = yaml::scalar_string(file, node, "topology");
  if (text == "single-switch") return NetworkTopology::single_switch;
  if (text == "fat-tree") return NetworkTopology::fat_tree;
  if (text == "rail-optimized") return NetworkTopology::rail_optimized;
  yaml::fail(file, node,
             "unknown network topology '" + text + "' (expected single-switch, fat-tree or rail-optimized)");
}

// 2, 3 or auto (0: the fewest levels that fit); single-switch networks have no levels to set.
int read_levels(const std::string& file, const YAML::Node& node, NetworkTopology topology) {
  if (topology == NetworkTopology::single_switch) yaml::fail(file, node, "a single-switch network has no 'levels'");
  if (yaml::scalar_string(file, node, "levels") == "auto") return 0;
  int levels = yaml::scalar_integer(file, node, "levels", 1);
  if (levels != 2 && levels != 3)
    yaml::fail(file, node, "'levels' must be 2, 3 or auto, got " + std::to_string(levels));
  return levels;
}

Network read_network(const std::string& file, const YAML::Node& node) {
  StrictMap map(node, file, "the network",
                {"topology", "levels", "switch_radix", "oversubscription", "hop_latency", "link_bandwidth",
                 "in_network_reduction"});
  Network network;
  network.location = yaml::location_of(file, node);
  network.topology = read_network_topology(file, map.required("topology"));
  bool needs_radix = network.topology != NetworkTopology::single_switch;
  network.switch_radix =
      needs_radix ? map.integer("switch_radix", 2, kMaxRadix) : map.integer_or("switch_radix", 2, kMaxRadix, 0);
  if (YAML::Node levels = map.optional("levels")) network.levels = read_levels(file, levels, network.topology);
  if (network.topology == NetworkTopology::single_switch) {
    for (const char* key : {"oversubscription", "link_bandwidth"}) {
      if (map.has(key)) {
        yaml::fail(file, map.required(key),
                   "'" + std::string(key) +
                       "' is only for networks with switch-to-switch links "
                       "(fat-tree, rail-optimized)");
      }
    }
  }
  network.oversubscription = map.number_or("oversubscription", 1.0, 1e6, 1.0);
  network.hop_latency_s = map.duration_s("hop_latency");
  network.link_bandwidth_Bps = map.bandwidth_Bps_or("link_bandwidth", 0.0);
  network.in_network_reduction = map.boolean_or("in_network_reduction", false);
  return network;
}

void read_gpu_models(const std::string& file, const YAML::Node& node, ClusterSpec& spec) {
  if (!node.IsMap() || node.size() == 0) {
    yaml::fail(file, node, "'gpu_models' must be a map of GPU model names to their figures");
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string name = yaml::scalar_string(file, it->first, "gpu model name");
    if (name.empty()) yaml::fail(file, it->first, "a gpu model name must not be empty");
    if (spec.gpu_models.count(name)) yaml::fail(file, it->first, "duplicate gpu model '" + name + "'");
    spec.gpu_models[name] = read_gpu_model(file, name, it->second);
  }
}

void read_groups(const std::string& file, const YAML::Node& list, ClusterSpec& spec) {
  yaml::require_sequence(file, list, "nodes");
  if (list.size() == 0) yaml::fail(file, list, "'nodes' must list at least one node group");
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    NodeGroup group = read_group(file, list[i], spec, i);
    if (!names.insert(group.name).second) {
      yaml::fail(file, list[i]["name"], "duplicate node group name '" + group.name + "'");
    }
    spec.groups.push_back(std::move(group));
  }
  check_size_limits(spec, yaml::location_of(file, list));
}

// Attention calibrated by shape charges the kernel's chunks, which depend on the GPU's multiprocessors.
void check_attention_geometry(const std::string& file, const YAML::Node& calibration, const ClusterSpec& spec) {
  if (spec.calibration->attention_shapes.empty()) return;
  for (const auto& [name, gpu] : spec.gpu_models) {
    if (gpu.multiprocessors == 0) {
      yaml::fail(file, calibration["attention"],
                 "'attention' needs the GPU's multiprocessors (the kernel's chunks depend on them): gpu model '" +
                     name + "' has no 'multiprocessors'");
    }
  }
}

// "2.26.2" or "2.26" (no patch), a release treering holds NCCL's constants for.
NcclVersion read_nccl_version(const std::string& file, const YAML::Node& node) {
  const std::string text = yaml::scalar_string(file, node, "nccl_version");
  static const std::regex kRelease(R"(2\.(\d{1,3})(?:\.(\d{1,3}))?)");
  std::smatch match;
  if (!std::regex_match(text, match, kRelease)) {
    yaml::fail(file, node, "nccl_version must be an NCCL release such as 2.26.2, got '" + text + "'");
  }
  NcclVersion version;
  version.minor = std::stoi(match[1]);
  version.patch = match[2].matched ? std::stoi(match[2]) : -1;
  if (version.minor < kOldestNcclMinor || version.minor > kNewestNcclMinor) {
    yaml::fail(file, node,
               "treering holds NCCL's constants for 2." + std::to_string(kOldestNcclMinor) + " to 2." +
                   std::to_string(kNewestNcclMinor) + ", not " + text);
  }
  version.given = true;
  return version;
}

ClusterSpec read_cluster(const std::string& file, const YAML::Node& root) {
  StrictMap map(root, file, "the cluster",
                {"name", "description", "gpu_models", "nodes", "network", "nccl_version", "calibration"});
  ClusterSpec spec;
  spec.source = file;
  spec.name = map.name("name");
  if (map.has("description")) spec.description = map.string("description");
  read_gpu_models(file, map.required("gpu_models"), spec);
  read_groups(file, map.required("nodes"), spec);
  if (YAML::Node network = map.optional("network")) spec.network = read_network(file, network);
  if (YAML::Node version = map.optional("nccl_version")) spec.nccl_version = read_nccl_version(file, version);
  if (YAML::Node calibration = map.optional("calibration")) {
    spec.calibration = read_calibration(file, calibration);
    check_attention_geometry(file, calibration, spec);
  }
  return spec;
}

// Where the documents of a YAML stream start (their first token) and where their root nodes are.
class DocumentMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  std::vector<YAML::Mark> roots;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark) {
    if (roots.size() < starts.size()) roots.push_back(mark);
  }
};

// A cluster file holds one document. The documents are counted with yaml-cpp's event parser rather than
// YAML::LoadAll, which never returns on a token it cannot place (a ',' outside brackets: yaml-cpp issue 1040,
// in 0.7 and 0.8): it appends empty documents at the same token, without end, until memory runs out. Here a
// document that starts where the previous one started is that token, reported as a syntax error.
void check_one_document(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentMarks marks;
  while (marks.starts.size() < 3 && parser.HandleNextDocument(marks)) {
    const size_t count = marks.starts.size();
    if (count >= 2 && marks.starts[count - 1].pos == marks.starts[count - 2].pos) {
      const YAML::Mark& at = marks.starts[count - 1];
      const size_t pos = static_cast<size_t>(at.pos);
      const std::string what = pos < text.size() ? std::string(1, text[pos]) : "";
      throw InputError(yaml::location_of(file, at), "YAML syntax: unexpected '" + what + "'");
    }
  }
  if (marks.roots.size() > 1) {
    throw InputError(yaml::location_of(file, marks.roots[1]),
                     "a cluster file holds one YAML document; this is a second one");
  }
}

}  // namespace

ClusterSpec load_cluster_text(std::string_view yaml_text, const std::string& source_name) {
  const std::string text(yaml_text);
  YAML::Node root;
  try {
    check_one_document(text, source_name);
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw InputError(yaml::location_of(source_name, error.mark), "YAML syntax: " + error.msg);
  }
  return read_cluster(source_name, root);
}

ClusterSpec load_cluster_file(const std::string& path) { return load_cluster_text(read_input_file(path), path); }

std::vector<int> block_gpu_to_nic(int gpus, int nics) {
  std::vector<int> gpu_to_nic;
  if (nics <= 0) return gpu_to_nic;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    gpu_to_nic.push_back(static_cast<int>(static_cast<long long>(gpu) * nics / gpus));
  }
  return gpu_to_nic;
}

}  // namespace treering::topologies
