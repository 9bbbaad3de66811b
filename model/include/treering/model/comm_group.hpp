// What the collective model needs to know about a group of GPUs on a cluster, derived from the topology
// graph and the cluster file's calibration. Pure.
#pragma once

#include <array>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::model {

// Rows of NCCL's latency tables, plus p2p for send/recv.
enum class LatencyRow { tree, ring, nvls, nvls_tree, p2p };
constexpr int kLatencyRows = 5;
constexpr int kProtocols = 3;  // LL, LL128, Simple

// Seconds, indexed [row][protocol].
struct LatencyTable {
  std::array<std::array<double, kProtocols>, kLatencyRows> base{};
  std::array<std::array<double, kProtocols>, kLatencyRows> scale_up_step{};   // NCCL's hw latency NVLink or PCI
  std::array<std::array<double, kProtocols>, kLatencyRows> scale_out_step{};  // NCCL's hw latency NET
};

// Default efficiencies: achieved over nominal bandwidth (shared/reference/nccl-cost-model.md).
// - ring inside an NVSwitch node: NCCL's 8xH100 graph, 12 channels x 30 GB/s = 360 of 450 GB/s -> 0.80;
// - all-reduce with in-switch reduction (NVLS): ~475 GB/s busbw on 8xH100, algbw = 475 x 8/14 = 271 GB/s of
//   450 -> 0.60;
// - NICs: 46-48 GB/s achieved of NDR's 50 -> 0.92.
constexpr double kScaleUpEfficiency = 0.80;
constexpr double kInSwitchEfficiency = 0.60;
constexpr double kScaleOutEfficiency = 0.92;

struct CommGroup {
  std::vector<int> gpus;            // the members, global GPU indices
  int ranks = 0;                    // n
  int domains = 0;                  // k: scale-up domains spanned ("nodes" in NCCL's model)
  int ranks_per_domain = 0;         // g: the most members in one domain
  bool uniform = true;              // every spanned domain holds g members
  bool pcie = false;                // some domain's fabric is PCIe (NCCL's PCI latencies apply)
  bool mesh = false;                // every spanned domain is a full mesh (rings run over all of its links)
  bool in_switch_reduction = false; // every spanned domain can reduce in its switch (NVLS)
  double scale_up_bus_Bps = 0;      // ring bus bandwidth per GPU inside a domain, effective
  double in_switch_Bps = 0;         // all-reduce algorithm bandwidth with in-switch reduction, effective
  double scale_out_domain_Bps = 0;  // NIC bandwidth out of the group's slowest domain, effective (0: one domain)
  double scale_out_gpu_Bps = 0;     // the same divided by the domain's members
  double scale_out_nic_Bps = 0;     // one NIC of the slowest domain, effective (what one GPU pair gets)
  double scale_up_pair_Bps = 0;     // one GPU to another in its domain, effective (bottleneck of the route)
  LatencyTable latency;             // NCCL 2.30.7 defaults, then the cluster's calibration
};
// Calibration (topologies::Calibration) replaces: tiers.scale-up.bandwidth -> scale_up_bus_Bps;
// tiers.scale-out.bandwidth -> the effective bandwidth of one NIC; tier latencies -> every step latency of
// that tier; collectives.ROW -> that row's base and step latencies (all protocols).

// Achieved over nominal bandwidth for every link of a tier, what the simulator gives its links. Without a
// calibration, the default efficiencies. With one, the factor that makes a link carry the calibrated rate:
// - scale-up: calibrated bus bandwidth / the nominal ring bus bandwidth of the group that was measured (the
//   first GPUs of a node, as many as the most ranks measured; 2 if unknown), so that the simulator's ring
//   of that group runs at the calibrated rate. Example: rtx4090-pcie calibrated at 7.1 GB/s on 2 ranks; their
//   ring's two edges both cross switch 0's 31.5 GB/s uplink (no P2P: through the host) -> 15.75 GB/s
//   nominal -> 0.451.
// - scale-out: calibrated bandwidth / the fastest NIC's nominal one (the calibration replaces one NIC's
//   rate). Example: dgx-h100 calibrated at 45 GB/s per 400 Gb/s (50 GB/s) NIC -> 0.90.
struct LinkEfficiency {
  double scale_up = kScaleUpEfficiency;
  double scale_out = kScaleOutEfficiency;
  double of(const topologies::Link& link) const {
    return link.tier == topologies::Tier::scale_up ? scale_up : scale_out;
  }
};
LinkEfficiency link_efficiency(const topologies::Topology& topology);

// The group of `gpus` (all GPUs when empty). Throws std::invalid_argument for an index out of range or a
// repeated GPU.
CommGroup describe_group(const topologies::Topology& topology, std::vector<int> gpus = {});

// NCCL 2.30.7's latency constants (seconds) before calibration.
LatencyTable nccl_latency_defaults(bool pcie_fabric);

}  // namespace treering::model
