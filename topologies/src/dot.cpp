// Graphviz export: nodes (and multi-node NVLink domains) as cluster boxes, one edge per cable.
#include <map>
#include <sstream>

#include "treering/topologies/topology.hpp"
#include "treering/topologies/units.hpp"

namespace treering::topologies {
namespace {

const char* shape_of(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu: return "box, style=filled, fillcolor=\"#b7e1a1\"";
    case DeviceKind::nic: return "ellipse, style=filled, fillcolor=\"#a1c4e1\"";
    case DeviceKind::nvswitch: return "hexagon, style=filled, fillcolor=\"#e1d5a1\"";
    case DeviceKind::pcie_switch: return "hexagon, style=filled, fillcolor=\"#e1c0a1\"";
    case DeviceKind::host_bridge: return "octagon, style=filled, fillcolor=\"#e1a1a1\"";
    case DeviceKind::network_switch: return "diamond, style=filled, fillcolor=\"#d0d0d0\"";
  }
  return "box";
}

// A Graphviz double-quoted string: backslashes and quotes escaped, line breaks as \n.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void write_device(std::ostringstream& out, const Topology& topology, DeviceId id, const char* indent) {
  const Device& device = topology.device(id);
  out << indent << "d" << id << " [label=" << quoted(device.name) << ", shape=" << shape_of(device.kind) << "];\n";
}

}  // namespace

std::string to_dot(const Topology& topology) {
  std::ostringstream out;
  out << "// " << topology.gpu_count() << " GPUs, " << topology.node_count()
      << " nodes. Render: dot -Tsvg FILE.dot -o FILE.svg\n";
  out << "graph " << quoted(topology.spec().name) << " {\n  graph [rankdir=TB, fontname=\"Helvetica\"];\n"
      << "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n";
  // Group devices: by node, multi-node domain switches by domain, network switches outside.
  std::map<int, std::vector<DeviceId>> by_node;
  std::map<int, std::vector<DeviceId>> domain_switches;
  std::vector<DeviceId> outside;
  for (DeviceId id = 0; id < topology.device_count(); ++id) {
    const Device& device = topology.device(id);
    if (device.node >= 0) {
      by_node[device.node].push_back(id);
    } else if (device.domain >= 0) {
      domain_switches[device.domain].push_back(id);
    } else {
      outside.push_back(id);
    }
  }
  int open_domain = -1;
  for (const auto& [node_index, devices] : by_node) {
    const NodeInfo& node = topology.node(node_index);
    if (domain_switches.count(node.domain) && node.domain != open_domain) {
      if (open_domain >= 0) out << "  }\n";
      open_domain = node.domain;
      out << "  subgraph cluster_domain" << node.domain << " {\n    label=\"NVLink domain " << node.domain << "\";\n";
      for (DeviceId id : domain_switches[node.domain]) write_device(out, topology, id, "    ");
    } else if (!domain_switches.count(node.domain) && open_domain >= 0) {
      out << "  }\n";
      open_domain = -1;
    }
    out << "  subgraph cluster_node" << node_index << " {\n    label=" << quoted(node.name) << ";\n";
    for (DeviceId id : devices) write_device(out, topology, id, "    ");
    out << "  }\n";
  }
  if (open_domain >= 0) out << "  }\n";
  for (DeviceId id : outside) write_device(out, topology, id, "  ");
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.reverse < id) continue;  // one edge per cable
    out << "  d" << link.from << " -- d" << link.to << " [label=\"" << format_bandwidth(link.bandwidth_Bps) << "\""
        << (link.tier == Tier::scale_out ? ", color=\"#3060a0\"" : "") << "];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace treering::topologies
