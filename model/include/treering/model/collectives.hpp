// The collective cost model: time of all-reduce, all-gather, reduce-scatter, broadcast and send/recv of
// n bytes over a group of GPUs, for several algorithms and NCCL's three protocols, and the fastest pick.
// Pure: no I/O, no globals. Units: seconds, bytes, bytes per second.
//
// Form (per algorithm a, protocol p): time = latency(a, p) + bytes_moved_per_gpu(a) / bandwidth(a, p, bytes).
// Latency follows NCCL's model (src/graph/tuning.cc, constants of NCCL 2.30.7-1:
// ncclTopoTuneModel's latency tables, ncclTopoGetAlgoTime's formula), plus the fill of NVLS-tree's chunk pipeline;
// bandwidths come from the cluster's tiers (topology) times efficiencies, and across domains what NCCL makes of them by
// size: per-protocol caps, its tree correction, fewer channels for small buffers (model/src/nccl_rates.hpp,
// NCCL 2.26.2). All are overridable by the cluster file's calibration section.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/model/comm_group.hpp"

namespace treering::model {

enum class CollectiveOp { allreduce, allgather, reduce_scatter, broadcast, sendrecv, alltoall };
// collnet_direct and collnet_chain are NCCL's CollNet all-reduces, which reduce in the network's switches (SHARP):
// only where the cluster's network says so (`in_network_reduction`), as is NVLS across domains.
enum class CollectiveAlgorithm {
  ring,
  tree,
  nvls,
  nvls_tree,
  hierarchical,
  recursive_doubling,
  collnet_direct,
  collnet_chain,
  p2p
};
enum class Protocol { ll, ll128, simple };

const char* to_string(CollectiveOp op);
const char* to_string(CollectiveAlgorithm algorithm);
const char* to_string(Protocol protocol);
// Parsers for the command line; throw std::invalid_argument listing the accepted names.
CollectiveOp parse_collective_op(const std::string& text);
CollectiveAlgorithm parse_collective_algorithm(const std::string& text);
Protocol parse_protocol(const std::string& text);
// What an algorithm needs beyond NCCL's usual, for errors: " (needs ...)", or "" when nothing special.
std::string requirements(CollectiveAlgorithm algorithm);
// Whether `algorithm` on a group spanning `domains` domains reduces in the network's switches (SHARP): CollNet
// Direct and Chain, and NVLS across domains.
bool reduces_in_network(CollectiveAlgorithm algorithm, int domains);

// Which algorithms may be picked. NCCL's own set is what a program linked with NCCL gets (ring, tree, nvls,
// nvls-tree, collnet-direct, collnet-chain for collectives; p2p for send/recv); `all` adds the two-level hierarchical
// all-reduce and recursive doubling/halving, which MPI libraries use and custom kernels could.
enum class AlgorithmSet { nccl, all };

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::allreduce;
  double bytes = 0;  // all-reduce, broadcast, send/recv: the buffer; all-gather: the output; reduce-scatter: the input;
                     // all-to-all: each rank's send buffer (S / n to every rank, itself included; nccl-tests' size)
  AlgorithmSet allowed = AlgorithmSet::nccl;
  std::optional<CollectiveAlgorithm> algorithm;  // force one (error when it cannot run here)
  std::optional<Protocol> protocol;              // force one
};

struct CollectiveCandidate {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  Protocol protocol = Protocol::simple;
  double time_s = 0;
  double latency_s = 0;     // the step latencies (and, for NVLS-tree, the chunk pipeline's fill)
  double transfer_s = 0;    // bytes over bandwidth
  double inter_node_s = 0;  // the part spent on the network: its step latencies, and the transfer when the
                            // NICs are the bottleneck (the rest is inside scale-up domains)
  double processing_s = 0;  // the part of transfer_s that NCCL's protocol caps, tree correction and channel
                            // narrowing add to bytes over (tier rate x protocol factor): bound by the GPUs'
                            // threads, not the links (the simulator caps the flows at the model's rate)
};

struct CollectiveEstimate {
  CollectiveOp op = CollectiveOp::allreduce;
  double bytes = 0;
  CollectiveCandidate chosen;
  double algorithm_bandwidth_Bps = 0;           // bytes / time_s (nccl-tests' algbw)
  double bus_bandwidth_Bps = 0;                 // algbw times the nccl-tests bus factor (2(n-1)/n for all-reduce, ...)
  double scale_up_bytes_per_gpu = 0;            // what one GPU sends over the fabric inside its domain
  double scale_out_bytes_per_gpu = 0;           // what one GPU sends through the NICs
  std::vector<CollectiveCandidate> candidates;  // every (algorithm, protocol) that can run, fastest first
};

// NCCL's network proxy post overhead for the Simple protocol (tuning.cc's netOverhead, 1 us x3 for Simple, on
// Intel hosts; collectives take the group's, NcclChannels::network_post_s x3, which is 2 us x3 on AMD hosts): what
// one proxy thread takes to post each network send of a group after the first (all-to-all, a phase of sends).
// A send across nodes also waits for one such post before its first byte: point-to-point connections use NCCL's
// shared network buffers (src/transport/net.cc sendSetup: `shared` unless a collective's graph or connIndex 0),
// so the proxy must hand the GPU a buffer slot (sharedBuffersGet, connFifo offset, sendHead) before the GPU can
// write, where a collective's connection has its slots from the start.
constexpr double kNetworkPostOverheadSimple_s = 3e-6;  // the decode model's sends (Intel hosts' figure)

// A send across nodes waits for its receiver's clear-to-send, which no collective step waits for: NCCL's IB
// transport writes no data before the receiver has RDMA-written its buffer's address into the sender's FIFO
// (src/transport/net_ib.cc, NCCL 2.23: ncclIbIsend returns "not ready" until the slot that ncclIbIrecv's
// ncclIbPostFifo writes has landed; net_ib/p2p.cc's ctsFifo in 2.30). A collective's receives are posted up to
// NCCL_STEPS ahead, so its handshakes are off the critical path; a send/recv posts its receive when the call is
// made, beside the send. The clear-to-send is a small RDMA write the sender's proxy polls for: the event one LL
// network step is (post, write, poll), charged at that figure (LatencyTable::scale_out_step, LL: 5.0 us).
// Worked example, send/recv between two DGX H100: 8.4 (base) + 14 (Simple network hop) + 3 (shared slot) + 5.0
// (clear-to-send) = 30.4 us, against 30.7-34.2 us for 256 B-8 KiB between two A40 hosts (NVIDIA/nccl-tests#214).
double network_clear_to_send_s(const CommGroup& group);

// Bytes of data per byte on the wire: LL 0.5 (8 of every 16), LL128 0.92, Simple 1 (NCCL's protocol factors).
double protocol_efficiency(Protocol protocol);

// All-to-all as NCCL runs it (ncclAlltoAll, and nccl-tests' alltoall_perf: one ncclSend and one ncclRecv per
// peer in a group), algorithm p2p. Facts from NCCL v2.26.2-1 (src/enqueue.cc addP2pToPlan and
// scheduleP2pTasksToPlan, src/init.cc p2pSchedule, src/transport/net.cc, src/device/sendrecv.h):
// - NCCL's tuner has no p2p model ("Send/Recv not included for now", nccl_common.h), so the terms are its
//   collective constants for the same hops: across domains the Simple protocol (network p2p connections get no
//   LL buffers unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1), base 8.4 us + one network hop 14 us + the receivers'
//   clear-to-send (5.0 us, posted by every receiver at once), as send/recv;
//   inside a domain LL for messages up to 16 KiB (NCCL_P2P_LL_THRESHOLD, a message under 64 KiB runs on one
//   channel), base 6.6 + NVLink hop 0.6 us, else Simple (8.4 + 3.4 us).
// - Every peer is in flight at once (8 peers per work batch, one CTA per batch of peers, ceil(n / 8) channels
//   of the p2p ones), but one proxy thread posts every network send and receive: each network peer adds NCCL's
//   network post overhead (1 us, x3 for Simple: tuning.cc's netOverhead), the first one its shared slot's.
// - Bytes: a GPU sends S (g-1)/n through its fabric port and S (n-g)/n through its NIC (alltoall does not
//   aggregate NICs per peer; with PXN every GPU's traffic leaves by its own rail), in parallel.
// Worked example, 2 x DGX H100 (16 ranks, 8 per node), S = 16 KiB (1 KiB per peer): across, 8.4 + 14 + 5.0 +
// 8 x 3 = 51.4 us; inside, 7.2 us (LL); bytes: 8 KiB through the NIC at 46 GB/s (0.18 us) and 7 KiB through the
// port at 360 GB/s x 0.5 (LL; 0.04 us): 51.58 us.
//
// Throws std::invalid_argument for a negative size, a group of fewer than 2 GPUs for a collective (one GPU
// takes no time and is answered with zeros), or a forced algorithm or protocol that cannot run here.
CollectiveEstimate estimate_collective(const CommGroup& group, const CollectiveRequest& request);

}  // namespace treering::model
