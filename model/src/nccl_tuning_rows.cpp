// NCCL's per-architecture and per-host tuning rows, and the channel caps they give (see NcclRows, NcclChannels).
// Sources: NCCL src/graph/tuning.cc (tunerConstants / the tables before it, ncclTopoTuneModel's index1, index2
// and compCapIndex, getNetOverhead) and src/transport/nvls.cc (NVLS_NCHANNELS_SM90, NVLS_NCHANNELS_SM100,
// ncclNvlsTreeSm100Tuning), read at every tag from v2.23.4-1 to v2.30.7-1.
#include "treering/model/comm_group.hpp"

#include <algorithm>
#include <utility>

namespace treering::model {
namespace {

namespace topo = treering::topologies;

// GB/s per search channel, {2 nodes, more nodes}: NCCL's index2 1 and 2.
struct ChannelCaps {
  double ring_ll128[2];
  double tree_ll128[2];
  double tree[2];
};
constexpr ChannelCaps kCaps[] = {
    {{20.0, 20.0}, {20.0, 20.0}, {18.5, 10.0}},  // Volta
    {{20.0, 20.0}, {20.0, 20.0}, {23.6, 17.8}},  // Ampere
    {{36.7, 36.7}, {36.7, 29.0}, {41.4, 36.0}},  // Hopper
};
// Blackwell's row by release.
constexpr ChannelCaps kBlackwell225{{73.4, 73.4}, {73.4, 58.0}, {82.8, 72.0}};    // 2.25.0-2.27.x: 2 x Hopper's
constexpr ChannelCaps kBlackwell228{{73.4, 73.4}, {31.67, 20.0}, {42.8, 24.0}};   // 2.28.0-2.28.6
constexpr ChannelCaps kBlackwell2287{{34.6, 73.4}, {31.67, 20.0}, {42.8, 24.0}};  // 2.28.7-2.28.x
constexpr ChannelCaps kBlackwell229{{34.6, 34.5}, {31.67, 20.0}, {42.8, 24.0}};   // 2.29.0-2.29.6
constexpr ChannelCaps kBlackwell2297{{40.0, 40.0}, {31.67, 20.0}, {42.8, 24.0}};  // from 2.29.7
constexpr double kLlMax[2][2] = {{39.0, 20.4}, {22.5, 19.0}};  // llMaxBws rows 0 (Intel) and 1 (AMD), GB/s

const ChannelCaps& caps_of(NcclGpuRow row, const topo::NcclVersion& version) {
  if (row != NcclGpuRow::blackwell) return kCaps[static_cast<int>(row)];
  if (!at_least(version, 25)) return kCaps[static_cast<int>(NcclGpuRow::hopper)];  // no Blackwell row yet
  if (!at_least(version, 28)) return kBlackwell225;
  if (!at_least(version, 28, 7)) return kBlackwell228;
  if (!at_least(version, 29)) return kBlackwell2287;
  if (!at_least(version, 29, 7)) return kBlackwell229;
  return kBlackwell2297;
}

// NVLS channels across domains (NVLS_NCHANNELS_SM90 / SM100, ncclNvlsTreeSm100Tuning from 2.30.3).
int nvls_channels(const NcclChannelInputs& inputs, const NcclRows& rows, const topo::NcclVersion& version) {
  if (rows.gpu != NcclGpuRow::blackwell || !at_least(version, 25)) return 16;
  if (!at_least(version, 30, 3)) return 32;
  const double nic_GBps = inputs.nic_Bps / 1e9;
  if (inputs.domains == 2 && nic_GBps >= 48) return 32;
  if (nic_GBps >= 96) return inputs.ranks_per_domain <= 8 ? 24 : 32;
  return nic_GBps >= 48 ? 24 : 32;
}

const char* row_name(NcclGpuRow row) {
  switch (row) {
    case NcclGpuRow::volta: return "Volta";
    case NcclGpuRow::ampere: return "Ampere";
    case NcclGpuRow::hopper: return "Hopper";
    case NcclGpuRow::blackwell: return "Blackwell";
  }
  return "?";
}

}  // namespace

int nccl_constants_epoch(const topo::NcclVersion& version) {
  static const std::pair<int, int> kChanges[] = {{24, 0}, {25, 0}, {28, 0}, {28, 7},
                                                 {28, 9}, {29, 0}, {29, 7}, {30, 3}};
  int epoch = 0;
  for (const auto& [minor, patch] : kChanges) epoch += at_least(version, minor, patch) ? 1 : 0;
  return epoch;
}

NcclRows nccl_rows(topo::GpuArchitecture architecture, topo::HostCpu cpu) {
  NcclRows rows;
  switch (architecture) {
    case topo::GpuArchitecture::volta:
    case topo::GpuArchitecture::turing: rows.gpu = NcclGpuRow::volta; break;
    case topo::GpuArchitecture::ampere:
    case topo::GpuArchitecture::ada: rows.gpu = NcclGpuRow::ampere; break;
    case topo::GpuArchitecture::blackwell: rows.gpu = NcclGpuRow::blackwell; break;
    case topo::GpuArchitecture::hopper: rows.gpu = NcclGpuRow::hopper; break;
    case topo::GpuArchitecture::cdna2:
    case topo::GpuArchitecture::cdna3: rows.rccl = true; break;
    case topo::GpuArchitecture::unknown: rows.gpu_assumed = true; break;
  }
  rows.intel_host = cpu == topo::HostCpu::intel;
  rows.amd_host = cpu == topo::HostCpu::amd;
  rows.arm_host = cpu == topo::HostCpu::arm;
  rows.host_assumed = cpu == topo::HostCpu::unknown;
  return rows;
}

NcclRows combine(const NcclRows& a, const NcclRows& b) {
  NcclRows rows;
  rows.gpu = std::min(a.gpu, b.gpu);
  rows.rccl = a.rccl || b.rccl;
  rows.intel_host = a.intel_host || b.intel_host;
  rows.amd_host = a.amd_host || b.amd_host;
  rows.arm_host = a.arm_host || b.arm_host;
  rows.gpu_assumed = a.gpu_assumed || b.gpu_assumed;
  rows.host_assumed = a.host_assumed || b.host_assumed;
  return rows;
}

NcclRows nccl_rows_of(const topo::ClusterSpec& spec, const std::vector<int>& groups) {
  NcclRows rows;
  bool first = true;
  for (size_t index = 0; index < spec.groups.size(); ++index) {
    if (!groups.empty() && std::find(groups.begin(), groups.end(), static_cast<int>(index)) == groups.end()) continue;
    const topo::NodeGroup& group = spec.groups[index];
    const NcclRows these = nccl_rows(spec.gpu_models.at(group.gpu_model).architecture, group.host_cpu);
    rows = first ? these : combine(rows, these);
    first = false;
  }
  return rows;
}

bool amd_ll_row(const NcclRows& rows, const topo::NcclVersion& version) {
  const int vendors = int(rows.intel_host) + int(rows.amd_host) + int(rows.arm_host);
  return rows.amd_host || (at_least(version, 24) && vendors > 1);  // NCCL_TOPO_CPU_VENDOR_MIXED from 2.24
}

std::string describe(const NcclRows& rows, const topo::NcclVersion& version) {
  if (rows.rccl) return "AMD Instinct GPUs (RCCL: NCCL's per-channel caps not applied, RCCL's own tuning not modelled)";
  const int vendors = int(rows.intel_host) + int(rows.amd_host) + int(rows.arm_host);
  std::string text = std::string(row_name(rows.gpu)) + " GPUs, ";
  text += vendors > 1     ? (amd_ll_row(rows, version) ? "mixed hosts (the AMD row)" : "mixed hosts")
          : rows.amd_host ? "AMD hosts"
          : rows.arm_host ? "Arm hosts"
                          : "Intel hosts";
  if (rows.gpu_assumed || rows.host_assumed) {
    text += " (assumed: the cluster file names no ";
    text += rows.gpu_assumed && rows.host_assumed ? "GPU architecture or host CPU"
            : rows.gpu_assumed                    ? "GPU architecture"
                                                  : "host CPU";
    text += ")";
  }
  return text;
}

NcclChannels nccl_channels(const NcclChannelInputs& inputs, const NcclRows& rows, const topo::NcclVersion& version) {
  NcclChannels nccl;
  nccl.rows = rows;
  nccl.network_post_s = rows.amd_host && !rows.intel_host && !rows.arm_host ? 2e-6 : 1e-6;  // getNetOverhead
  if (inputs.domains < 2 || inputs.nics < 1) return nccl;
  constexpr double kGB = 1e9;
  const int more = inputs.domains == 2 ? 0 : 1;
  nccl.search_channels = inputs.nics;
  nccl.channels = std::min(2 * inputs.nics, 32);  // MAXCHANNELS
  nccl.nvls_channels = nvls_channels(inputs, rows, version);
  if (rows.rccl) return nccl;  // RCCL's own caps: not modelled
  const ChannelCaps& caps = caps_of(rows.gpu, version);
  nccl.ll_max_bus_Bps = kLlMax[amd_ll_row(rows, version) ? 1 : 0][more] * kGB;
  nccl.ll128_bus_Bps = inputs.nics * caps.ring_ll128[more] * kGB;
  nccl.tree_ll128_bus_Bps = inputs.nics * caps.tree_ll128[more] * kGB;
  nccl.tree_bus_Bps = inputs.nics * caps.tree[more] * kGB;
  return nccl;
}

}  // namespace treering::model
