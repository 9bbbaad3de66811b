#include "treering/model/comm_group.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <numeric>
#include <stdexcept>

namespace treering::model {
namespace {

namespace topo = treering::topologies;
constexpr double kMicro = 1e-6;
constexpr double kNone = std::numeric_limits<double>::infinity();  // the protocol does not exist for the row

using Row = std::array<double, kProtocols>;

Row micro(Row values) {
  for (double& value : values) value *= kMicro;
  return values;
}

// The effective ring bus bandwidth inside one domain: every member sends to the next member of the same
// domain at once (a ring), routes counted per link; the busiest link sets the pace. A mesh is the
// exception: NCCL/RCCL run several rings over different links, so all of a GPU's links to the others count.
double ring_bus_bandwidth(const topo::Topology& topology, const std::vector<int>& members) {
  const topo::NodeGroup& group = topology.spec().groups[topology.node(topology.node_of_gpu(members.front())).group];
  if (members.size() < 2) return kNone;
  if (group.fabric.type == topo::FabricType::mesh) {
    return group.fabric.link_bandwidth_Bps * group.fabric.links_per_peer * static_cast<double>(members.size() - 1);
  }
  std::map<topo::LinkId, int> routes_on;
  for (size_t i = 0; i < members.size(); ++i) {
    for (topo::LinkId id : topology.route(members[i], members[(i + 1) % members.size()]).links) ++routes_on[id];
  }
  double slowest = kNone;
  for (const auto& [id, routes] : routes_on) slowest = std::min(slowest, topology.link(id).bandwidth_Bps / routes);
  return slowest;
}

struct ScaleOut {
  double total_Bps = 0;  // the NICs the members use, together
  double nic_Bps = 0;    // the slowest of them
  int count = 0;         // how many
};

// The NICs a domain's members use to leave it (each counted once, however many members share it), each at
// its effective bandwidth (calibrated per NIC, else nominal x efficiency) capped by the path from the GPU to
// it (a PCIe link can be slower than the NIC): `outside` is a GPU of another domain, for the route.
ScaleOut domain_scale_out(const topo::Topology& topology, const std::vector<int>& members, int outside) {
  const auto& calibration = topology.spec().calibration;
  std::map<std::pair<int, int>, double> nics;  // (node, NIC) -> effective bandwidth
  for (int gpu : members) {
    const int node = topology.node_of_gpu(gpu);
    const topo::NodeGroup& group = topology.spec().groups[topology.node(node).group];
    if (group.nics.count == 0) continue;
    const int nic = group.nics.gpu_to_nic[static_cast<size_t>(gpu - topology.node(node).first_gpu)];
    const double rated_Bps = calibration && calibration->scale_out ? calibration->scale_out->bandwidth_Bps
                                                                   : kScaleOutEfficiency * group.nics.bandwidth_Bps;
    const double path_Bps = kScaleOutEfficiency * topology.route(gpu, outside).bottleneck_Bps;
    nics[{node, nic}] = std::max(nics[{node, nic}], std::min(rated_Bps, path_Bps));
  }
  ScaleOut out{0, kNone, static_cast<int>(nics.size())};
  for (const auto& [nic, bandwidth_Bps] : nics) {
    out.total_Bps += bandwidth_Bps;
    out.nic_Bps = std::min(out.nic_Bps, bandwidth_Bps);
  }
  return out;
}

// Calibrated values replace only cells that exist (NVLS has no LL or LL128), and tier latencies only the
// per-step rows (ring, tree, p2p): NVLS's and NVLS-tree's constants are fixed costs, not per-hop latencies.
void set_row(std::array<Row, kLatencyRows>& table, LatencyRow row, double value) {
  for (double& cell : table[static_cast<size_t>(row)]) {
    if (std::isfinite(cell)) cell = value;
  }
}

void apply_calibration(const topo::Calibration& calibration, CommGroup& group) {
  for (LatencyRow row : {LatencyRow::ring, LatencyRow::tree, LatencyRow::p2p}) {
    if (calibration.scale_up && calibration.scale_up->latency_s)
      set_row(group.latency.scale_up_step, row, *calibration.scale_up->latency_s);
    if (calibration.scale_out && calibration.scale_out->latency_s)
      set_row(group.latency.scale_out_step, row, *calibration.scale_out->latency_s);
  }
  if (calibration.scale_up) group.scale_up_bus_Bps = calibration.scale_up->bandwidth_Bps;
  if (calibration.in_switch_Bps && group.in_switch_reduction) group.in_switch_Bps = *calibration.in_switch_Bps;
  if (group.nccl.search_channels > 0) {  // the caps exist across domains only
    if (calibration.ll_bus_Bps) group.nccl.ll_max_bus_Bps = *calibration.ll_bus_Bps;
    if (calibration.ll128_bus_Bps)
      group.nccl.ll128_bus_Bps = group.nccl.tree_ll128_bus_Bps = *calibration.ll128_bus_Bps;
  }
  static const std::map<std::string, LatencyRow> kRows{{"tree", LatencyRow::tree},
                                                       {"ring", LatencyRow::ring},
                                                       {"nvls", LatencyRow::nvls},
                                                       {"nvls-tree", LatencyRow::nvls_tree},
                                                       {"p2p", LatencyRow::p2p},
                                                       {"collnet-direct", LatencyRow::collnet_direct},
                                                       {"collnet-chain", LatencyRow::collnet_chain}};
  for (const auto& [name, values] : calibration.collectives) {
    const LatencyRow row = kRows.at(name);
    if (values.base_latency_s) set_row(group.latency.base, row, *values.base_latency_s);
    if (values.scale_up_step_latency_s) set_row(group.latency.scale_up_step, row, *values.scale_up_step_latency_s);
    if (values.scale_out_step_latency_s) set_row(group.latency.scale_out_step, row, *values.scale_out_step_latency_s);
  }
}

// Where NCCL `version`'s tables differ from 2.30.7's (see nccl_latency_defaults).
void apply_release(LatencyTable& table, const topo::NcclVersion& version) {
  if (!at_least(version, 28, 9))
    table.scale_out_step[static_cast<int>(LatencyRow::nvls_tree)][2] = 14 * kMicro;  // Simple
}

// NCCL's tuning rows of a communicator of `gpus` (see NcclRows) over every member's node group, and the
// slowest NIC's nominal rate among them (NCCL's minNetBw).
std::pair<NcclRows, double> nccl_rows_of(const topo::Topology& topology, const std::vector<int>& gpus) {
  std::set<int> groups;
  for (int gpu : gpus) groups.insert(topology.node(topology.node_of_gpu(gpu)).group);
  double nic_Bps = kNone;
  for (int index : groups) {
    const topo::NodeGroup& group = topology.spec().groups[index];
    if (group.nics.count > 0) nic_Bps = std::min(nic_Bps, group.nics.bandwidth_Bps);
  }
  return {model::nccl_rows_of(topology.spec(), std::vector<int>(groups.begin(), groups.end())),
          std::isfinite(nic_Bps) ? nic_Bps : 0.0};
}

}  // namespace

LatencyTable nccl_latency_defaults(bool pcie_fabric, const topo::NcclVersion& version) {
  // NCCL v2.30.7-1 src/graph/tuning.cc (ncclTopoTuneModel's baseLat and hwLat tables), microseconds, protocols
  // {LL, LL128, Simple}. p2p send/recv takes the ring row.
  LatencyTable table;
  const auto row = [](LatencyRow r) { return static_cast<int>(r); };
  table.base[row(LatencyRow::tree)] = micro({6.8, 14.0, 8.4});
  table.base[row(LatencyRow::ring)] = micro({6.6, 14.0, 8.4});
  table.base[row(LatencyRow::nvls)] = micro({kNone, kNone, 0.0});
  table.base[row(LatencyRow::nvls_tree)] = micro({kNone, kNone, 0.0});
  table.base[row(LatencyRow::p2p)] = table.base[row(LatencyRow::ring)];
  table.base[row(LatencyRow::collnet_direct)] = micro({kNone, kNone, 0.0});
  table.base[row(LatencyRow::collnet_chain)] = micro({kNone, kNone, 0.0});
  if (pcie_fabric) {
    table.scale_up_step[row(LatencyRow::tree)] = micro({1.0, 1.9, 4.0});
    table.scale_up_step[row(LatencyRow::ring)] = micro({1.0, 2.5, 5.7});
  } else {
    table.scale_up_step[row(LatencyRow::tree)] = micro({0.6, 1.25, 4.0});
    table.scale_up_step[row(LatencyRow::ring)] = micro({0.6, 1.9, 3.4});
  }
  table.scale_up_step[row(LatencyRow::nvls)] = micro({kNone, kNone, 25.0});
  table.scale_up_step[row(LatencyRow::nvls_tree)] = micro({kNone, kNone, 25.0});
  table.scale_up_step[row(LatencyRow::p2p)] = table.scale_up_step[row(LatencyRow::ring)];
  table.scale_up_step[row(LatencyRow::collnet_direct)] = micro({kNone, kNone, 3.7});  // NVLink and PCI alike
  table.scale_up_step[row(LatencyRow::collnet_chain)] = micro({kNone, kNone, 2.8});
  table.scale_out_step[row(LatencyRow::tree)] = micro({5.0, 8.5, 14.0});
  table.nccl_ring_scale_out_step = micro({2.7, 4.0, 14.0});
  table.scale_out_step[row(LatencyRow::ring)] = table.scale_out_step[row(LatencyRow::tree)];  // (LatencyTable)
  table.scale_out_step[row(LatencyRow::nvls)] = micro({kNone, kNone, 18.0});
  table.scale_out_step[row(LatencyRow::nvls_tree)] = micro({kNone, kNone, 20.9});
  table.scale_out_step[row(LatencyRow::p2p)] = table.scale_out_step[row(LatencyRow::ring)];
  table.scale_out_step[row(LatencyRow::collnet_direct)] = micro({kNone, kNone, 31.0});
  table.scale_out_step[row(LatencyRow::collnet_chain)] = micro({kNone, kNone, 30.0});
  apply_release(table, version);
  return table;
}

CommGroup describe_group(const topo::Topology& topology, std::vector<int> gpus) {
  if (gpus.empty()) {
    for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) gpus.push_back(gpu);
  }
  std::map<int, std::vector<int>> by_domain;
  for (int gpu : gpus) {
    if (gpu < 0 || gpu >= topology.gpu_count())
      throw topologies::InputError("GPU " + std::to_string(gpu) + " does not exist");
    by_domain[topology.domain_of_gpu(gpu)].push_back(gpu);
  }
  CommGroup group;
  group.gpus = gpus;
  group.ranks = static_cast<int>(gpus.size());
  group.domains = static_cast<int>(by_domain.size());
  group.mesh = true;  // until a domain is not
  group.in_switch_reduction = true;
  group.nvswitch = true;
  group.scale_up_bus_Bps = kNone;
  group.in_switch_Bps = kNone;
  group.scale_out_domain_Bps = kNone;
  for (const auto& [domain, members] : by_domain) {
    std::vector<int> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      throw topologies::InputError("GPU " + std::to_string(*std::adjacent_find(sorted.begin(), sorted.end())) +
                                   " appears twice in the group");
    }
    const topo::Fabric& fabric =
        topology.spec().groups[topology.node(topology.node_of_gpu(members.front())).group].fabric;
    group.ranks_per_domain = std::max(group.ranks_per_domain, static_cast<int>(members.size()));
    group.pcie = group.pcie || fabric.type == topo::FabricType::pcie;
    group.mesh = group.mesh && fabric.type == topo::FabricType::mesh;
    group.in_switch_reduction = group.in_switch_reduction && fabric.in_switch_reduction;
    group.nvswitch = group.nvswitch && fabric.type == topo::FabricType::nvswitch;
    group.scale_up_bus_Bps =
        std::min(group.scale_up_bus_Bps, kScaleUpEfficiency * ring_bus_bandwidth(topology, members));
    if (fabric.in_switch_reduction) {
      group.in_switch_Bps = std::min(group.in_switch_Bps, kInSwitchEfficiency * fabric.bandwidth_Bps);
    }
  }
  for (const auto& [domain, members] : by_domain) {
    group.uniform = group.uniform && static_cast<int>(members.size()) == group.ranks_per_domain;
  }
  if (!group.in_switch_reduction) group.in_switch_Bps = 0;
  group.p2p = p2p_communicator(topology, gpus);
  group.scale_out_nic_Bps = kNone;
  group.scale_up_pair_Bps = kNone;
  int fewest_nics = std::numeric_limits<int>::max();
  for (auto it = by_domain.begin(); it != by_domain.end(); ++it) {
    const auto& members = it->second;
    if (group.domains > 1) {
      const int outside =
          std::next(it) != by_domain.end() ? std::next(it)->second.front() : by_domain.begin()->second.front();
      const ScaleOut out = domain_scale_out(topology, members, outside);
      group.scale_out_domain_Bps = std::min(group.scale_out_domain_Bps, out.total_Bps);
      group.scale_out_nic_Bps = std::min(group.scale_out_nic_Bps, out.nic_Bps);
      fewest_nics = std::min(fewest_nics, out.count);
    }
    if (members.size() > 1) {
      group.scale_up_pair_Bps =
          std::min(group.scale_up_pair_Bps, kScaleUpEfficiency * topology.route(members[0], members[1]).bottleneck_Bps);
    }
  }
  if (topology.spec().calibration && topology.spec().calibration->scale_up) {
    group.scale_up_pair_Bps = topology.spec().calibration->scale_up->bandwidth_Bps;
  }
  if (group.domains < 2) group.scale_out_domain_Bps = 0;
  group.in_network_reduction = group.domains > 1 && topology.spec().network.in_network_reduction;
  group.scale_out_gpu_Bps = group.scale_out_domain_Bps / group.ranks_per_domain;
  group.nccl_version = topology.spec().nccl_version;
  const auto [rows, nic_Bps] = nccl_rows_of(topology, gpus);
  group.nccl = nccl_channels({group.domains, fewest_nics, nic_Bps, group.ranks_per_domain}, rows, group.nccl_version);
  group.latency = nccl_latency_defaults(group.pcie, group.nccl_version);
  if (topology.spec().calibration) apply_calibration(*topology.spec().calibration, group);
  return group;
}

P2pCommunicator p2p_communicator(const topo::Topology& topology, const std::vector<int>& gpus) {
  P2pCommunicator out;
  out.ranks = static_cast<int>(gpus.size());
  std::set<int> hosts;
  double channel_Bps = kNone;
  for (int gpu : gpus) {
    const int node = topology.node_of_gpu(gpu);
    hosts.insert(node);
    const topo::Fabric& fabric = topology.spec().groups[topology.node(node).group].fabric;
    out.all_nvlink = out.all_nvlink && fabric.type != topo::FabricType::pcie;
    channel_Bps = fabric.p2p_channel_bandwidth_Bps > 0 ? std::min(channel_Bps, fabric.p2p_channel_bandwidth_Bps) : 0.0;
  }
  out.hosts = static_cast<int>(hosts.size());
  out.channel_Bps = std::isfinite(channel_Bps) ? channel_Bps : 0.0;
  return out;
}

int nccl_p2p_channels(double bytes, int ranks, int hosts, bool all_nvlink) {
  if (!(bytes > 0)) return 1;
  int floor = kNcclP2pChannels;
  while (floor * ranks > kNcclP2pChannels && floor > 1) floor /= 2;
  const double chunk = hosts == 1 && all_nvlink ? 512.0 * 1024 : 128.0 * 1024;
  const double min_part = hosts > 1 ? chunk / 2 : chunk / 8;
  const double max_part = hosts > 1 ? chunk : chunk * 32;
  int channels = static_cast<int>(std::min<double>(floor, std::ceil(bytes / min_part)));
  double part = std::max(min_part, std::ceil(bytes / channels));
  while (part > max_part && channels <= kNcclP2pChannels / 2) {
    channels *= 2;
    part = std::ceil(bytes / channels);
  }
  return channels;
}

double p2p_send_Bps(const P2pCommunicator& communicator, double bytes, double link_Bps) {
  if (communicator.channel_Bps <= 0) return link_Bps;
  const int channels = nccl_p2p_channels(bytes, communicator.ranks, communicator.hosts, communicator.all_nvlink);
  return std::min(link_Bps, channels * communicator.channel_Bps);
}

LinkEfficiency link_efficiency(const topo::Topology& topology) {
  LinkEfficiency efficiency;
  const auto& calibration = topology.spec().calibration;
  if (!calibration) return efficiency;
  if (calibration->scale_up) {
    // The group measured: the first GPUs of the first node with two or more, as many as the most ranks
    // measured (two when the provenance does not say).
    const int measured_ranks = calibration->provenance.ranks ? calibration->provenance.ranks->second : 2;
    for (int node = 0; node < topology.node_count(); ++node) {
      const topo::NodeInfo& n = topology.node(node);
      if (n.gpus < 2) continue;
      std::vector<int> members(static_cast<size_t>(std::clamp(measured_ranks, 2, n.gpus)));
      std::iota(members.begin(), members.end(), n.first_gpu);
      efficiency.scale_up = calibration->scale_up->bandwidth_Bps / ring_bus_bandwidth(topology, members);
      break;
    }
  }
  if (calibration->scale_out) {
    double fastest_nic_Bps = 0;
    for (const topo::NodeGroup& group : topology.spec().groups)
      fastest_nic_Bps = std::max(fastest_nic_Bps, group.nics.bandwidth_Bps);
    if (fastest_nic_Bps > 0) efficiency.scale_out = calibration->scale_out->bandwidth_Bps / fastest_nic_Bps;
  }
  return efficiency;
}

}  // namespace treering::model
