// The two all-to-alls of an MoE layer under expert parallelism (expert_routing.hpp): dispatch sends each token's
// hidden state to the GPUs holding its top-k experts, combine brings the experts' outputs back. Three kernels
// move them, each costed from how it works (public code and documentation, cited), as latency + transfer:
//
// - nccl: ncclAllToAll (one send and receive per peer, collectives.hpp's model), every rank's buffer padded to the
//   most-loaded receiver's: S = busiest copies x message bytes (what engines without dedicated kernels do).
// - low-latency (DeepEP's low-latency kernels, deepseek-ai/DeepEP csrc/kernels/internode_ll.cu, v1.0-v1.1): one
//   GPU-initiated RDMA write (IBGDA) per (token, expert) copy, node-local and to itself too, no NVLink forwarding,
//   no host in the loop (CUDA-graph friendly). Every copy leaves through the sender's NIC: send B k m, the busiest
//   receiver takes busiest_factor x that; time = launch + the farthest route through NICs + a flag write + B k m
//   x busiest_factor / (the GPU's share of its NICs). Worked example, deepseek-v3 dispatch (fp8: 7,168 + 56 x 4 +
//   16 B = 7,408 B), 128 tokens, EP 16 on 2 H800 nodes (one 400 Gb/s NIC a GPU, 0.92 efficient: 46 GB/s): 128 x 8 x
//   7,408 = 7.59 MB, x 1.05 (the busiest GPU) / 46 GB/s = 173 us + ~10 us latency.
// - normal (DeepEP's high-throughput kernels, csrc/kernels/internode.cu): a token crosses the network once per
//   destination node (an RDMA write to the GPU of the sender's rail there), then NVLink forwards it to the GPUs of
//   that node that hold its experts, dispatch and NVLink copies pipelined; a host-side notify step first
//   exchanges the receive counts (not CUDA-graph friendly). NIC bytes B m x (nodes - 1) x P(node); NVLink bytes
//   B m x gpus_per_token x (g - 1) / g; time = launch + notify + the farthest route + busiest_factor x max(NIC
//   bytes / NIC rate, NVLink bytes / the port's rate).
//
// Combine moves the same copies back, each the expert's output in the combine dtype (bf16: 2 x hidden B); the
// busiest GPU is then the busiest sender. Message bytes: fp8 = hidden + hidden / 128 x 4 (a float scale per
// 128 values) + the low-latency kernel's 16-byte header (source token and index); bf16 = 2 x hidden.
#pragma once

#include <string>
#include <vector>

#include "treering/model/comm_group.hpp"
#include "treering/model/expert_layout.hpp"
#include "treering/model/expert_routing.hpp"

namespace treering::model {

enum class MoeOp { dispatch, combine };
const char* to_string(MoeOp op);  // "moe-dispatch" | "moe-combine"

struct MoeExchangeRequest {
  MoeOp op = MoeOp::dispatch;
  EpKernel kernel = EpKernel::low_latency;
  int tokens_per_gpu = 128;   // B: the tokens each GPU sends (its share of the batch)
  std::string dtype;          // fp8 | bf16 (empty: fp8 for dispatch, bf16 for combine, as DeepSeek serves)
  int redundant_experts = 0;  // ExpertPlacement's
  double skew = 1;            // ExpertPlacement's
};

struct MoeExchange {
  MoeOp op = MoeOp::dispatch;
  EpKernel kernel = EpKernel::low_latency;
  std::string dtype;
  ExpertRouting routing;
  double message_bytes = 0;         // one token copy on the wire
  double messages_per_gpu = 0;      // what a GPU sends: copies (nccl, low-latency) or one per node (normal)
  double nic_bytes_per_gpu = 0;     // what the mean GPU sends through its NIC(s)
  double nvlink_bytes_per_gpu = 0;  // and over its scale-up fabric (the normal kernel's forwarding included)
  double busiest_bytes = 0;         // the most-loaded GPU's received (dispatch) or sent (combine) bytes
  double nic_Bps = 0;               // one GPU's share of its node's NICs, effective
  double nvlink_Bps = 0;            // one GPU's port into its scale-up fabric, effective
  double latency_s = 0;             // launch, notify, the farthest route, the completion flag
  double transfer_s = 0;
  double time_s = 0;
  std::string bound;  // what the transfer waits on: "NIC", "NVLink" or "all-to-all"
};

// The exchange over the EP group `group` (its GPUs, domains of equal size). `topology` for the routes' latencies
// and the NICs. Throws InputError for what cannot run: a workload without experts, a placement expert_routing
// refuses, a kernel that needs NICs on nodes without them, an unknown dtype, a group of uneven domains.
MoeExchange estimate_moe_exchange(const topologies::Topology& topology, const CommGroup& group,
                                  const Workload& workload, const MoeExchangeRequest& request);

// One token copy's bytes on the wire (dtype "fp8" or "bf16"; the header above), the formula of this header's comment.
// Throws InputError for another dtype.
double moe_message_bytes(const Workload& workload, MoeOp op, EpKernel kernel, const std::string& dtype);

// One flow of the exchange between ranks of the group, as the simulator replays it: the mean traffic between
// each pair, the most-loaded GPU (rank 0) receiving (dispatch) or sending (combine) busiest_factor times the mean;
// nccl: every pair the padded buffer's share, S / n; normal: one flow to the sender's rail GPU in every other
// node and one to every other GPU of its node (the forwarding, which by symmetry each GPU does as much of).
struct MoeFlow {
  int from = 0;
  int to = 0;
  double bytes = 0;
  bool through_nics = false;  // the low-latency kernel's writes: out by the NIC even inside a node (or to itself)
};
// Rank r of the group lies in domain `domain_of_rank[r]` (ranks of one domain in rank order).
std::vector<MoeFlow> moe_exchange_flows(const std::vector<int>& domain_of_rank, const MoeExchange& exchange);

}  // namespace treering::model
