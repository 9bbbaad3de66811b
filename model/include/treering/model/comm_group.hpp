// What the collective model needs to know about a group of GPUs on a cluster, derived from the topology
// graph and the cluster file's calibration. Pure.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "treering/topologies/topology.hpp"

namespace treering::model {

// Rows of NCCL's latency tables, plus p2p for send/recv.
enum class LatencyRow { tree, ring, nvls, nvls_tree, p2p, collnet_direct, collnet_chain };
constexpr int kLatencyRows = 7;
constexpr int kProtocols = 3;  // LL, LL128, Simple

// Seconds, indexed [row][protocol].
struct LatencyTable {
  std::array<std::array<double, kProtocols>, kLatencyRows> base{};
  std::array<std::array<double, kProtocols>, kLatencyRows> scale_up_step{};  // NCCL's hw latency NVLink or PCI
  // A step across domains (a network hop), as it takes. The ring row is NCCL's tree NET figure, not NCCL's ring
  // one: a ring step and a tree step that cross the network are the same event (the proxy posts an RDMA write,
  // the peer polls its flags), and the tree figure is the one measured (2 x DGX H100 all-reduce at 8 B-64 KiB:
  // tree/LL 6.8 + 2 x (7 x 0.6 + 5.0) = 25.2 us against 24.7-25.9 us). NCCL's ring figure (2.7 us for LL) is
  // what its tuner spreads over every step of a multi-node ring; one 2 x 1 A100 HDR all-reduce, ring/LL, 19 us
  // measured (nccl-tests#150), is 6.6 + 2 x 2.7 = 12.0 us by it and 16.6 us by the tree figure.
  std::array<std::array<double, kProtocols>, kLatencyRows> scale_out_step{};
  // NCCL's own ring NET figure, which its tuner charges per network step and picks an algorithm by.
  std::array<double, kProtocols> nccl_ring_scale_out_step{};
};

// Default efficiencies: achieved over nominal bandwidth (NCCL's graph search on 8xH100 and public nccl-tests runs).
// - ring inside an NVSwitch node: NCCL's 8xH100 graph, 12 channels x 30 GB/s = 360 of 450 GB/s -> 0.80;
// - all-reduce with in-switch reduction (NVLS): ~475 GB/s busbw on 8xH100, algbw = 475 x 8/14 = 271 GB/s of
//   450 -> 0.60;
// - NICs: 46-48 GB/s achieved of NDR's 50 -> 0.92.
constexpr double kScaleUpEfficiency = 0.80;
constexpr double kInSwitchEfficiency = 0.60;
constexpr double kScaleOutEfficiency = 0.92;

// The rows of NCCL's tuning tables a communicator takes (NCCL src/graph/tuning.cc, ncclTopoTuneModel): the
// per-channel protocol caps by the oldest GPU's compute capability (minCompCap: Volta below 8.0, Turing included;
// Ampere 8.x, Ada included; Hopper 9.x; Blackwell 10.0 and up), LL's cap across nodes by host CPU vendor (the AMD
// row for AMD hosts and, from 2.24, for mixed vendors: an Intel and an Arm host are mixed; 2.23 took each rank's
// own vendor, which "AMD if any host is" approximates), the network proxy's post overhead by vendor
// (getNetOverhead: 2 us on AMD x86 hosts, else 1 us). AMD Instinct GPUs run RCCL, which replaces NCCL's
// per-channel caps with its own tuning model: the model applies no caps to them (RCCL's tuning is not modelled).
// Where the cluster file does not say, Hopper and Intel are assumed and the *_assumed flags say so.
enum class NcclGpuRow { volta, ampere, hopper, blackwell };
struct NcclRows {
  NcclGpuRow gpu = NcclGpuRow::hopper;
  bool rccl = false;        // AMD Instinct GPUs
  bool intel_host = false;  // vendors seen (an unknown host counts as none)
  bool amd_host = false;
  bool arm_host = false;
  bool gpu_assumed = false;
  bool host_assumed = false;
};
NcclRows nccl_rows(topologies::GpuArchitecture architecture, topologies::HostCpu cpu);
// A communicator of GPUs with rows `a` and `b`: the older GPU's row, the vendors of both.
NcclRows combine(const NcclRows& a, const NcclRows& b);
// The node groups `groups` of a cluster together (indices into spec.groups; empty: every group).
NcclRows nccl_rows_of(const topologies::ClusterSpec& spec, const std::vector<int>& groups = {});
// Whether LL's cap across nodes takes NCCL's AMD row in `version`.
bool amd_ll_row(const NcclRows& rows, const topologies::NcclVersion& version);
// "Hopper GPUs, Intel hosts", with "(assumed: ...)" where the cluster file does not say.
std::string describe(const NcclRows& rows, const topologies::NcclVersion& version);

// How NCCL spreads a collective over channels (thread blocks) and what each protocol can carry, for groups that
// span several domains (nodes); a single domain keeps the tier rates times the protocol factors. Facts from NCCL
// 2.23.4 to 2.30.7 (src/graph/tuning.cc and src/transport/nvls.cc at each tag):
// - src/graph/search.cc: across nodes a ring or tree search channel goes through one NIC (the Hopper channel
//   speeds top at 48 GB/s, below one NDR NIC), so a node with N NICs gets N search channels;
//   src/graph/connect.cc doubles them into execution channels (8 NICs -> 16 channels);
// - NVLS channels: 16 (NVLS_NCHANNELS_SM90; Blackwell before 2.25 too), 32 on Blackwell across nodes from 2.25;
//   from 2.30.3 Blackwell across nodes is tuned (ncclNvlsTreeSm100Tuning): 32 on 2 nodes with NICs of 48 GB/s
//   or more, else 24 with NICs of 96 GB/s or more and at most 8 GPUs a node (32 with more), else 24 with NICs
//   of 48 GB/s or more (its chunk sizes are not modelled);
// - tunerConstants (2 nodes / more), GB/s: LL carries at most 39 / 20.4 of bus bandwidth on the Intel row,
//   22.5 / 19 on the AMD row (llMaxBws); per search channel, LL128 on rings 20 (Volta, Ampere), 36.7 (Hopper);
//   LL128 on trees 20 / 20, 36.7 / 29; Simple trees 18.5 / 10 (Volta), 23.6 / 17.8 (Ampere), 41.4 / 36 (Hopper)
//   (perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws; the same in every release held). Blackwell's
//   row: Hopper's before 2.25, twice Hopper's 2.25-2.27; from 2.28 tree LL128 31.67 / 20 and Simple tree 42.8 /
//   24, ring LL128 73.4 / 73.4 (2.28.0-2.28.6), 34.6 / 73.4 (2.28.7-2.28.x), 34.6 / 34.5 (2.29.0-2.29.6), 40 / 40
//   (from 2.29.7). Worked examples: 2 x DGX H100, LL128 ring cap 8 x 36.7 = 293.6 GB/s; 2 x DGX A100 (AMD EPYC
//   hosts, 8 HDR NICs), LL128 ring cap 8 x 20 = 160 GB/s, LL cap 22.5 GB/s.
// Calibration (`protocols:`) replaces the LL and LL128 caps.
struct NcclChannels {
  int search_channels = 0;  // 0: one domain (no channel caps, no channel narrowing)
  int channels = 0;         // execution channels of rings and trees (2 x search)
  int nvls_channels = 16;
  double ll_max_bus_Bps = 0;      // LL's bus bandwidth cap (0: none)
  double ll128_bus_Bps = 0;       // LL128's bus bandwidth cap on rings (0: none)
  double tree_ll128_bus_Bps = 0;  // LL128's on trees
  double tree_bus_Bps = 0;        // Simple trees
  double network_post_s = 1e-6;   // the network proxy's post overhead per step (x3 for Simple)
  NcclRows rows;                  // the tuning rows these came from
};
// Releases that share every constant treering takes from NCCL share an epoch: the number of changes
// (2.24.0, 2.25.0, 2.28.0, 2.28.7, 2.28.9, 2.29.0, 2.29.7, 2.30.3) at or before `version`.
int nccl_constants_epoch(const topologies::NcclVersion& version);

// What NCCL's channel choice needs to know about a group across domains.
struct NcclChannelInputs {
  int domains = 1;
  int nics = 0;              // the fewest NICs a domain of the group uses
  double nic_Bps = 0;        // the slowest NIC's nominal rate (NCCL's minNetBw)
  int ranks_per_domain = 0;  // NCCL's ppn
};
NcclChannels nccl_channels(const NcclChannelInputs& inputs, const NcclRows& rows,
                           const topologies::NcclVersion& version = {});

// What NCCL's p2p channel rule (nccl_p2p_channels, below) needs to know about a communicator: its ranks, the
// hosts they span, whether every domain is NVLink, and one channel's rate (the slowest domain's fabric
// p2p_channel_bandwidth; 0 when some domain has none).
struct P2pCommunicator {
  int ranks = 0;
  int hosts = 1;
  bool all_nvlink = true;
  double channel_Bps = 0;
};

struct CommGroup {
  std::vector<int> gpus;                 // the members, global GPU indices
  int ranks = 0;                         // n
  int domains = 0;                       // k: scale-up domains spanned ("nodes" in NCCL's model)
  int ranks_per_domain = 0;              // g: the most members in one domain
  bool uniform = true;                   // every spanned domain holds g members
  bool pcie = false;                     // some domain's fabric is PCIe (NCCL's PCI latencies apply)
  bool mesh = false;                     // every spanned domain is a full mesh (rings run over all of its links)
  bool in_switch_reduction = false;      // every spanned domain can reduce in its switch (NVLS)
  bool in_network_reduction = false;     // the group spans domains and the network reduces (SHARP, NCCL's CollNet)
  bool nvswitch = false;                 // every spanned domain is an NVSwitch (NCCL's CollNet Direct needs one)
  double scale_up_bus_Bps = 0;           // ring bus bandwidth per GPU inside a domain, effective
  double in_switch_Bps = 0;              // all-reduce algorithm bandwidth with in-switch reduction, effective
  double scale_out_domain_Bps = 0;       // NIC bandwidth out of the group's slowest domain, effective (0: one domain)
  double scale_out_gpu_Bps = 0;          // the same divided by the domain's members
  double scale_out_nic_Bps = 0;          // one NIC of the slowest domain, effective (what one GPU pair gets)
  double scale_up_pair_Bps = 0;          // one GPU to another in its domain, effective (bottleneck of the route)
  LatencyTable latency;                  // the cluster's NCCL release's defaults, then the cluster's calibration
  topologies::NcclVersion nccl_version;  // the release whose constants these are
  P2pCommunicator p2p;                   // for NCCL's p2p channels (hosts: NCCL's nNodes, an NVL72 domain spans 18)
  NcclChannels nccl;                     // channel counts and per-protocol limits (only across domains, see below)
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

// The latency constants (seconds) of NCCL `version` before calibration. From 2.23.4 to 2.30.7 (src/graph/tuning.cc
// at each tag) they differ in one entry: NVLS-tree's network figure, 14 us before 2.28.9, 20.9 from it. Example,
// 2 x DGX H100, NVLS-tree: 25 + 2 x 14 = 53 us of constants in 2.26.2, 25 + 2 x 20.9 = 66.8 us in 2.30.7.
LatencyTable nccl_latency_defaults(bool pcie_fabric, const topologies::NcclVersion& version = {});

// NCCL's p2p channels per communicator (NCCL 2.21-2.30, src/graph/paths.cc: pow2Up of the collective channels,
// 24 on an 8-GPU H100 NVSwitch node -> 32; the channels per peer likewise 32, capped to the p2p channels;
// logged as "32 p2p channels, 32 p2p channels per peer" on 8 x H100, aws-samples/aws-do-eks nccl-test README).
constexpr int kNcclP2pChannels = 32;

// The channels NCCL stripes one send (or receive) of `bytes` over, in a communicator of `ranks` spanning
// `hosts` nodes (src/enqueue.cc, scheduleP2pTasksToPlan and addP2pToPlan, unchanged from 2.21.5 to 2.30.7):
// - the floor: the channels per peer, halved while floor x ranks > the p2p channels (8 ranks: 32 -> 4);
// - the chunk: 128 KiB across hosts or over PCIe, 512 KiB when every path is NVLink (src/init.cc);
// - parts of at least chunk/8 on one host, chunk/2 across hosts: min(floor, ceil(bytes / that)) channels, then
//   doubled while a part exceeds chunk x 32 on one host (16 MiB), one chunk across hosts, up to 32.
// Examples: 8 ranks on one DGX H100: 32 MiB -> 4 channels (8 MiB parts), 128 MiB -> 8, 100 KiB -> 2; 2 ranks:
// 1 MiB -> 16; 16 ranks on two nodes: floor 2, 1 MiB -> 8 (128 KiB parts).
int nccl_p2p_channels(double bytes, int ranks, int hosts, bool all_nvlink);

P2pCommunicator p2p_communicator(const topologies::Topology& topology, const std::vector<int>& gpus);

// A send's rate inside a domain: the link's, or what its channels move when that is less (channel_Bps 0: the link's).
// Example: 32 MiB among 8 H100s of one DGX at 15 GB/s per channel: 4 x 15 = 60 GB/s, not 360.
double p2p_send_Bps(const P2pCommunicator& communicator, double bytes, double link_Bps);

}  // namespace treering::model
