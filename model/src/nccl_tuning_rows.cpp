// NCCL's per-architecture and per-host tuning rows, and the channel caps they give (see NcclRows, NcclChannels).
// Source: NCCL v2.30.7-1 src/graph/tuning.cc (ncclTunerConstantsDefaults, ncclTopoTuneModel's index1/index2 and
// compCapIndex), src/transport/nvls.cc (NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32); Blackwell's row in
// earlier releases from the same files at v2.24.3-1 (no Blackwell row: Hopper's), v2.25.1-1 to v2.27.7-1
// (2 x Hopper's) and v2.28.9-1 (ring LL128 34.6 on 2 nodes, 73.4 beyond); Volta to Hopper are unchanged from
// v2.19.4-1 to v2.30.7-1.
#include "treering/model/comm_group.hpp"

#include <algorithm>

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
    {{20.0, 20.0}, {20.0, 20.0}, {18.5, 10.0}},   // Volta
    {{20.0, 20.0}, {20.0, 20.0}, {23.6, 17.8}},   // Ampere
    {{36.7, 36.7}, {36.7, 29.0}, {41.4, 36.0}},   // Hopper
    {{40.0, 40.0}, {31.67, 20.0}, {42.8, 24.0}},  // Blackwell
};
constexpr ChannelCaps kBlackwellAs2xHopper{{73.4, 73.4}, {73.4, 58.0}, {82.8, 72.0}};  // NCCL 2.25-2.27
constexpr ChannelCaps kBlackwell228{{34.6, 73.4}, {31.67, 20.0}, {42.8, 24.0}};        // NCCL 2.28

// The caps of `row` in NCCL 2.`minor`.
const ChannelCaps& caps_of(NcclGpuRow row, int minor) {
  if (row == NcclGpuRow::blackwell && minor <= 24) return kCaps[static_cast<int>(NcclGpuRow::hopper)];
  if (row == NcclGpuRow::blackwell && minor <= 27) return kBlackwellAs2xHopper;
  if (row == NcclGpuRow::blackwell && minor == 28) return kBlackwell228;
  return kCaps[static_cast<int>(row)];
}

constexpr double kLlMax[2][2] = {{39.0, 20.4}, {22.5, 19.0}};  // llMaxBws rows 0 (Intel) and 1 (AMD), GB/s

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

NcclRows nccl_rows(topo::GpuArchitecture architecture, topo::HostCpu cpu) {
  NcclRows rows;
  switch (architecture) {
    case topo::GpuArchitecture::volta:
    case topo::GpuArchitecture::turing: rows.gpu = NcclGpuRow::volta; break;
    case topo::GpuArchitecture::ampere:
    case topo::GpuArchitecture::ada: rows.gpu = NcclGpuRow::ampere; break;
    case topo::GpuArchitecture::blackwell: rows.gpu = NcclGpuRow::blackwell; break;
    case topo::GpuArchitecture::hopper:
    case topo::GpuArchitecture::cdna2:
    case topo::GpuArchitecture::cdna3: rows.gpu = NcclGpuRow::hopper; break;
    case topo::GpuArchitecture::unknown: rows.gpu_assumed = true; break;
  }
  rows.amd_host = cpu == topo::HostCpu::amd;
  rows.host_assumed = cpu == topo::HostCpu::unknown;
  return rows;
}

NcclRows combine(const NcclRows& a, const NcclRows& b) {
  NcclRows rows;
  rows.gpu = std::min(a.gpu, b.gpu);
  rows.gpu_assumed = a.gpu_assumed || b.gpu_assumed;
  rows.amd_host = a.amd_host || b.amd_host;
  rows.host_assumed = !rows.amd_host && (a.host_assumed || b.host_assumed);
  return rows;
}

std::string describe(const NcclRows& rows) {
  std::string text = std::string(row_name(rows.gpu)) + " GPUs, " + (rows.amd_host ? "AMD" : "Intel") + " hosts";
  if (rows.gpu_assumed || rows.host_assumed) {
    text += " (assumed: the cluster file names no ";
    text += rows.gpu_assumed && rows.host_assumed ? "GPU architecture or host CPU" : rows.gpu_assumed ? "GPU architecture" : "host CPU";
    text += ")";
  }
  return text;
}

NcclChannels nccl_channels(int domains, int nics, const NcclRows& rows, int nccl_minor) {
  NcclChannels nccl;
  nccl.rows = rows;
  if (domains < 2 || nics < 1) return nccl;
  constexpr double kGB = 1e9;
  const int more = domains == 2 ? 0 : 1;
  const ChannelCaps& caps = caps_of(rows.gpu, nccl_minor);
  nccl.search_channels = nics;
  nccl.channels = std::min(2 * nics, 32);  // MAXCHANNELS
  nccl.nvls_channels = rows.gpu == NcclGpuRow::blackwell && nccl_minor >= 25 ? 32 : 16;
  nccl.ll_max_bus_Bps = kLlMax[rows.amd_host ? 1 : 0][more] * kGB;
  nccl.ll128_bus_Bps = nics * caps.ring_ll128[more] * kGB;
  nccl.tree_ll128_bus_Bps = nics * caps.tree_ll128[more] * kGB;
  nccl.tree_bus_Bps = nics * caps.tree[more] * kGB;
  return nccl;
}

}  // namespace treering::model
