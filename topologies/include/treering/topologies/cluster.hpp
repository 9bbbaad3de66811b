// Plain descriptions of a cluster, as read from YAML (see topologies/README.md for the schema).
// Every quantity carries its unit in its name. The loader guarantees the invariants stated here.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies {

// The GPU's architecture (YAML `architecture`): NCCL's tuning constants (per-channel protocol caps, NVLS channels)
// depend on it, indexed by compute capability (NCCL v2.30.7-1 src/graph/tuning.cc: Volta rows below 8.0, Ampere
// 8.x, Hopper 9.x, Blackwell 10.0 and up). cdna2/cdna3 are AMD Instinct GPUs (RCCL). unknown: the file does not say.
enum class GpuArchitecture { unknown, volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3 };

// The host CPU of a node (YAML `host_cpu`): across nodes NCCL caps LL's bandwidth by CPU vendor, lower on AMD
// hosts (tuning.cc llMaxBws). unknown: the file does not say.
enum class HostCpu { unknown, intel, amd, arm };

struct GpuModel {
  std::string name;
  double hbm_bandwidth_Bps = 0;   // > 0
  double hbm_capacity_bytes = 0;  // > 0
  double peak_fp16_flops = 0;     // dense 16-bit tensor FLOP/s, > 0
  double launch_overhead_s = 0;   // >= 0
  // Streaming multiprocessors (YAML `multiprocessors`, from the GPU's datasheet; 0 when the file does not say): how
  // many CTAs one wave of a kernel runs, which sets how a split-KV attention kernel cuts its shard into chunks.
  int multiprocessors = 0;
  GpuArchitecture architecture = GpuArchitecture::unknown;
};

enum class FabricType { nvswitch, mesh, pcie };

struct Fabric {
  FabricType type = FabricType::nvswitch;
  double latency_s = 0;  // nvswitch: GPU-switch-GPU; mesh: per link; pcie: per switch/host bridge
  // nvswitch
  double bandwidth_Bps = 0;  // nvswitch: per GPU per direction; pcie: each GPU's link per direction
  int domain_nodes = 1;      // nvswitch: consecutive nodes sharing one NVLink domain
  bool in_switch_reduction = false;
  // mesh
  double link_bandwidth_Bps = 0;  // per link per direction
  int links_per_peer = 1;
  // pcie
  bool p2p = false;
  int pcie_switches = 1;
  double host_bandwidth_Bps = 0;  // each PCIe switch's uplink to the host bridge
  // Any type: what one NCCL channel (one CTA's copy loop) moves over this fabric in a point-to-point send; NCCL
  // stripes a send over a number of channels that depends on its size and the communicator's ranks
  // (model::nccl_p2p_channels), so mid-size sends between many ranks get a fraction of the link. 0: unknown
  // (no such limit is applied).
  double p2p_channel_bandwidth_Bps = 0;
};

struct Nics {
  int count = 0;  // 0 = no NICs
  double bandwidth_Bps = 0;
  double latency_s = 0;           // added by each NIC crossed
  std::vector<int> gpu_to_nic;    // size gpus_per_node, each in [0, count) (filled in by the loader)
  bool gpu_to_nic_given = false;  // listed in the file (else block_gpu_to_nic)
};

// A group of identical nodes.
struct NodeGroup {
  std::string name;
  int count = 0;          // >= 1
  std::string gpu_model;  // a key of ClusterSpec::gpu_models
  HostCpu host_cpu = HostCpu::unknown;
  int gpus_per_node = 0;      // >= 1
  int max_gpus_per_node = 0;  // >= gpus_per_node
  Fabric fabric;
  Nics nics;
  // The node's GPUs are virtual ranks on ONE physical GPU (treering-realrun decode --loopback P): the P ranks share
  // its memory bandwidth, compute, memory and copy engines, so each gets 1/P of the GPU model's figures and of the
  // fabric's bandwidth (the fabric: device copies). Applied once, when the topology is built (shared_by records P).
  bool shared_device = false;
  int shared_by = 0;
  InputLocation location;  // where the group was described (for errors found later)
};

enum class NetworkTopology { none, single_switch, fat_tree, rail_optimized };

struct Network {
  NetworkTopology topology = NetworkTopology::none;
  int levels = 2;                 // 2 or 3; 0 = auto (2 while the leaves fit under one spine layer)
  int switch_radix = 0;           // 0 = unlimited (single-switch only)
  double oversubscription = 1.0;  // leaf down:up, >= 1
  double hop_latency_s = 0;
  double link_bandwidth_Bps = 0;  // switch-to-switch; 0 = the fastest NIC
  // The switches reduce in the network (InfiniBand SHARP) and NCCL uses it (CollNet: the SHARP plugin and
  // NCCL_COLLNET_ENABLE=1; NCCL's default is off): all-reduces across nodes gain CollNet Direct, CollNet Chain
  // and, on NVLS nodes, NVLS across nodes.
  bool in_network_reduction = false;
  InputLocation location;
};

struct TierCalibration {
  std::optional<double> latency_s;  // every step latency of the tier (absent: NCCL's per-protocol defaults stay)
  double bandwidth_Bps = 0;
};

struct CollectiveCalibration {
  std::optional<double> base_latency_s;
  std::optional<double> scale_up_step_latency_s;
  std::optional<double> scale_out_step_latency_s;
};

// One band of a size-dependent cost: messages of at least `from_bytes` (up to the next band's) take
// latency_s + bytes / bandwidth_Bps. Bands are sorted by from_bytes, the first from 0. Where a host's caches, a
// protocol switch or an eager/rendezvous threshold changes the rate, each side of the knee gets its own line.
// Example: {0: 3 us, 11 GB/s}, {8 MiB: 120 us, 4.3 GB/s}: 4 MiB take 3 + 381 = 384 us, 16 MiB 120 + 3,902 us.
struct SizeBand {
  double from_bytes = 0;
  double latency_s = 0;
  double bandwidth_Bps = 0;
};

// The band that holds `bytes` (the last whose from_bytes <= bytes); `bands` not empty.
const SizeBand& band_of(const std::vector<SizeBand>& bands, double bytes);

struct CalibrationProvenance {
  std::vector<std::string> inputs;
  std::string date;
  std::string tool;
  std::optional<double> r_squared;             // in [0, 1]
  std::optional<double> median_abs_rel_error;  // >= 0
  std::optional<double> max_abs_rel_error;     // >= 0
  // What the measurements covered; a prediction outside is an extrapolation (the commands warn).
  std::optional<std::pair<double, double>> sizes_bytes;      // smallest, largest message
  std::optional<std::pair<int, int>> ranks;                  // fewest, most ranks
  std::optional<std::pair<double, double>> p2p_sizes_bytes;  // point-to-point messages measured
  std::optional<std::pair<long long, long long>> tokens;     // attention kernels measured (tokens per call)
  std::optional<double> attention_max_abs_rel_error;         // >= 0: the attention fit by shape's worst |error|
  // The collective fit's largest |error| at each message size it measured, by increasing size (YAML `residuals:
  // [{size: 8B, error: 0.056}, ...]`): a prediction's band at the sizes it uses (model/uncertainty.hpp).
  std::vector<std::pair<double, double>> residuals;  // bytes, |relative error|
  // The fitted parameters left at their priors, and why (YAML `kept_prior: ["..."]`).
  std::vector<std::string> kept_priors;
};

// A decode step's part as a real step measured it (treering-realrun step; treering calibrate): per layer (the LM
// head: per step) fixed_s + the bytes the part reads / (the GPU's rated HBM bandwidth x efficiency). Example:
// llama3.1-8b's projections read 83.9 MB a layer; fixed 6 us, efficiency 0.85 on an H100 (3.35 TB/s): 6 + 29.5 us.
struct StepPartCalibration {
  double fixed_s = 0;
  double efficiency = 0;  // in (0, 1]; 0: the part is not calibrated
};
// The attention part of one kernel shape (head dim, query heads per KV head): a kernel's fixed cost and achieved
// bandwidth differ by shape (an H100's split-KV kernel: 14.5 us + / 2.68 TB/s at head dim 64, 22.0 us + / 2.77
// TB/s at 128, both group 4). YAML `attention_by_shape: [{head_dim: 64, group: 4, fixed: .., efficiency: ..}]`.
struct StepAttentionShape {
  int head_dim = 0;
  int group = 0;
  StepPartCalibration line;
};

// The parts, in the order Calibration::step holds them (YAML keys under `calibration: step:`).
inline constexpr const char* kStepCalibrationParts[] = {"attention", "projections", "mlp", "other", "lm_head"};
inline constexpr int kStepCalibrationPartCount = 5;

// The split-KV attention kernel of one shape (head dim, query heads per KV head) as measured (treering-realrun
// bench attention; treering calibrate): time = fixed_s + split_per_chunk_s x chunks + bytes read / bandwidth_Bps,
// where chunks is the kernel's split of the shard (model/attention_kernel.hpp: it grows with the tokens until one
// wave of CTAs fills the GPU). YAML `attention: [{head_dim: 128, group: 4, fixed: 11us, split_per_chunk: 0.31us,
// bandwidth: 2.64TB/s}]`. Example (an H100, llama3.1-8b's shape, 33 chunks from 2,112 tokens on): 16,000 tokens
// read 65.5 MB: 11 + 0.31 x 33 + 24.8 = 46.0 us.
struct AttentionShapeCalibration {
  int head_dim = 0;
  int group = 0;
  double fixed_s = 0;            // >= 0
  double split_per_chunk_s = 0;  // >= 0
  double bandwidth_Bps = 0;      // > 0: the shard's bytes streamed (the memory ceiling, or the group's arithmetic)
};

struct Calibration {
  CalibrationProvenance provenance;
  std::optional<TierCalibration> scale_up;
  std::optional<TierCalibration> scale_out;
  std::map<std::string, CollectiveCalibration> collectives;  // ring | tree | nvls | nvls-tree | p2p
  // Protocol caps across scale-up domains (YAML `protocols: {LL: {bandwidth: ..}, LL128: {bandwidth: ..}}`): the
  // most bus bandwidth an all-reduce gets with NCCL's LL and LL128 protocols (rings and trees alike).
  std::optional<double> ll_bus_Bps;
  std::optional<double> ll128_bus_Bps;
  // The all-reduce rate of in-switch reduction (NVLS, and NVLS-tree's part inside a domain), YAML `in_switch:
  // {bandwidth: ..}`: replaces the fabric's bandwidth x the model's NVLS efficiency (0.60).
  std::optional<double> in_switch_Bps;
  // Point-to-point sends as measured (treering-realrun bench sendrecv), per tier the pair crosses: they replace
  // the send/recv model's latency and bandwidth for pairs of that tier.
  std::vector<SizeBand> p2p_scale_up, p2p_scale_out;
  std::optional<double> hbm_efficiency;  // in (0, 1]
  std::optional<double> launch_overhead_s;
  std::array<StepPartCalibration, kStepCalibrationPartCount> step{};  // kStepCalibrationParts' order
  std::vector<StepAttentionShape> step_attention_shapes;              // before step[0] for a step of such a shape
  std::vector<AttentionShapeCalibration> attention_shapes;            // a decode's attention kernels, by shape
};

// The NCCL release the cluster runs (YAML `nccl_version: 2.26.2`, or 2.26 for the minor's first release). The
// collective model takes that release's latency constants and per-architecture caps (NCCL src/graph/tuning.cc,
// src/transport/nvls.cc); treering holds those of 2.23 to 2.30 (kOldestNcclMinor, kNewestNcclMinor). Absent:
// the newest, 2.30.7 (given false).
struct NcclVersion {
  int minor = 30;  // NCCL 2.minor
  int patch = 7;   // -1: not given (the minor's first release)
  bool given = false;
};
constexpr int kOldestNcclMinor = 23;
constexpr int kNewestNcclMinor = 30;
std::string to_string(const NcclVersion& version);  // "2.30.7"; "2.26" without a patch
// Whether `version` is 2.minor.patch or later (a version without a patch counts as the minor's first release).
constexpr bool at_least(const NcclVersion& version, int minor, int patch = 0) {
  return version.minor != minor ? version.minor > minor : (version.patch < 0 ? 0 : version.patch) >= patch;
}

struct ClusterSpec {
  std::string name;
  std::string description;
  std::string source;  // file path or "preset:NAME"
  std::map<std::string, GpuModel> gpu_models;
  std::vector<NodeGroup> groups;
  Network network;
  NcclVersion nccl_version;
  std::optional<Calibration> calibration;

  int node_count() const;
  int gpu_count() const;
};

// The largest cluster treering builds a graph for: 2^20 GPUs and 2^20 NIC ports. Throws InputError at
// `where` (the node list, or no location for command-line overrides) when the spec is larger.
constexpr long long kMaxClusterGpus = 1'048'576;
constexpr long long kMaxClusterNicPorts = 1'048'576;
void check_size_limits(const ClusterSpec& spec, const InputLocation& where);

// What is legal but likely not meant, one sentence each, for the commands to print as warnings: a node group whose
// nodes do not fill its last multi-node NVLink domain. Example: gb200-nvl72 (18 trays a domain) at 20 nodes gives
// "node group 'tray': 20 nodes fill 1 NVLink domain of 18 nodes and leave a partial one of 2 (fabric.domain_nodes)".
std::vector<std::string> cluster_warnings(const ClusterSpec& spec);

const char* to_string(FabricType type);
const char* to_string(GpuArchitecture architecture);  // "hopper"; "unknown"
const char* to_string(HostCpu cpu);                   // "intel"; "unknown"
const char* to_string(NetworkTopology topology);

}  // namespace treering::topologies
