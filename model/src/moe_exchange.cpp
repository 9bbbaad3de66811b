// estimate_moe_exchange and moe_exchange_flows (moe_exchange.hpp): the MoE layer's dispatch and combine.
#include "treering/model/moe_exchange.hpp"

#include <algorithm>
#include <cmath>

#include "treering/model/collectives.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
namespace {

using topologies::InputError;

// The low-latency kernel's per-message header in dispatch: the source token's index and its top-k slot, as one
// 16-byte int4 ahead of the values (DeepEP internode_ll.cu, dispatch: num_bytes_per_msg = sizeof(int4) + ...).
constexpr double kLowLatencyHeaderBytes = 16;
// fp8 activations carry one float scale per 128 values (DeepSeek-V3's 1 x 128 activation tiles, report 3.3.2).
constexpr int kFp8ScaleBlock = 128;
// After its data, a GPU-initiated exchange writes a count or flag the receiver polls (DeepEP: the per-expert
// receive count, atomically added after the tokens): one more small RDMA write and a poll of GPU memory, about a
// microsecond on ConnectX-7 (NVSHMEM IBGDA put latency ~1-2 us, NVIDIA's IBGDA blog, 2022).
constexpr double kCompletionFlag_s = 1.5e-6;
// The normal kernels' notify step: every rank's receive counts are exchanged, and the host waits for them in
// mapped memory before it sizes the receive buffers and launches the dispatch (DeepEP buffer.py get_dispatch_layout
// and notify_dispatch; "not CUDA graph compatible" as the CPU waits): two more kernel launches and a host-device
// round trip, ~ 20 us.
constexpr double kNormalNotify_s = 20e-6;

}  // namespace

double moe_message_bytes(const Workload& w, MoeOp op, EpKernel kernel, const std::string& dtype) {
  if (dtype == "bf16") return 2.0 * w.hidden_size;
  if (dtype != "fp8") throw InputError("unknown MoE exchange dtype '" + dtype + "' (fp8 or bf16)");
  const double scales = std::ceil(static_cast<double>(w.hidden_size) / kFp8ScaleBlock) * 4;
  const bool header = kernel == EpKernel::low_latency && op == MoeOp::dispatch;
  return w.hidden_size + scales + (header ? kLowLatencyHeaderBytes : 0.0);
}

namespace {

const topologies::NodeGroup& node_group_of(const topologies::Topology& topology, int gpu) {
  return topology.spec().groups[static_cast<size_t>(topology.node(topology.node_of_gpu(gpu)).group)];
}

// One GPU's share of its node's NICs (count x rate / GPUs, at most one NIC's), effective; the slowest member's.
double nic_share_Bps(const topologies::Topology& topology, const CommGroup& group) {
  const double efficiency = link_efficiency(topology).scale_out;
  double slowest = 0;
  for (int gpu : group.gpus) {
    const topologies::NodeGroup& node = node_group_of(topology, gpu);
    if (node.nics.count <= 0)
      throw InputError("the " + std::string("exchange through NICs needs NICs: ") + node.name + "'s nodes have none");
    const double share =
        std::min(node.nics.bandwidth_Bps, node.nics.count * node.nics.bandwidth_Bps / node.gpus_per_node);
    slowest = slowest == 0 ? share : std::min(slowest, share);
  }
  return efficiency * slowest;
}

// The longest route from the group's first GPU to any member (through NICs for the low-latency kernel).
double farthest_route_s(const topologies::Topology& topology, const CommGroup& group, bool through_nics) {
  double farthest = 0;
  const int from = group.gpus.front();
  for (int to : group.gpus) {
    const topologies::Route route = through_nics ? topology.route_through_nics(from, to) : topology.route(from, to);
    farthest = std::max(farthest, route.latency_s);
  }
  return farthest;
}

double launch_s(const topologies::Topology& topology, const CommGroup& group) {
  const topologies::NodeGroup& node = node_group_of(topology, group.gpus.front());
  return topology.spec().gpu_models.at(node.gpu_model).launch_overhead_s;
}

void cost_low_latency(const topologies::Topology& topology, const CommGroup& group, MoeExchange& x) {
  const ExpertRouting& r = x.routing;
  x.messages_per_gpu = r.tokens_per_gpu * r.copies_per_token;
  x.nic_bytes_per_gpu = x.messages_per_gpu * x.message_bytes;  // every copy, its own GPU's too
  x.nvlink_bytes_per_gpu = 0;
  x.busiest_bytes = x.nic_bytes_per_gpu * r.busiest_factor;
  x.nic_Bps = nic_share_Bps(topology, group);
  x.latency_s = launch_s(topology, group) + farthest_route_s(topology, group, true) + kCompletionFlag_s;
  x.transfer_s = x.busiest_bytes / x.nic_Bps;
  x.bound = "NIC";
}

void cost_normal(const topologies::Topology& topology, const CommGroup& group, MoeExchange& x) {
  const ExpertRouting& r = x.routing;
  const int g = group.ranks_per_domain;
  const double remote_nodes = (r.nodes - 1) * r.node_probability;
  const double nvlink_copies = r.gpus_per_token * (g - 1) / g;
  x.messages_per_gpu = r.tokens_per_gpu * (remote_nodes + nvlink_copies);
  x.nic_bytes_per_gpu = r.tokens_per_gpu * remote_nodes * x.message_bytes;
  x.nvlink_bytes_per_gpu = r.tokens_per_gpu * nvlink_copies * x.message_bytes;
  x.busiest_bytes = (x.nic_bytes_per_gpu + x.nvlink_bytes_per_gpu) * r.busiest_factor;
  x.nic_Bps = r.nodes > 1 ? nic_share_Bps(topology, group) : 0.0;
  x.nvlink_Bps = group.scale_up_bus_Bps;
  const double nic_s = x.nic_Bps > 0 ? x.nic_bytes_per_gpu / x.nic_Bps : 0.0;
  const double nvlink_s = x.nvlink_Bps > 0 ? x.nvlink_bytes_per_gpu / x.nvlink_Bps : 0.0;
  x.transfer_s = r.busiest_factor * std::max(nic_s, nvlink_s);
  x.bound = nic_s >= nvlink_s ? "NIC" : "NVLink";
  x.latency_s = 2 * launch_s(topology, group) + kNormalNotify_s + farthest_route_s(topology, group, false);
}

void cost_nccl(const CommGroup& group, MoeExchange& x) {
  const ExpertRouting& r = x.routing;
  x.messages_per_gpu = r.tokens_per_gpu * r.copies_per_token;
  const double sent = x.messages_per_gpu * x.message_bytes;
  const int n = group.ranks, g = group.ranks_per_domain;
  x.nic_bytes_per_gpu = sent * (n - g) / n;
  x.nvlink_bytes_per_gpu = sent * (g - 1) / n;
  x.busiest_bytes = sent * r.busiest_factor;
  CollectiveRequest request;
  request.op = CollectiveOp::alltoall;
  request.bytes = x.busiest_bytes;  // every rank's buffer padded to the busiest's
  const CollectiveCandidate chosen = estimate_collective(group, request).chosen;
  x.latency_s = chosen.latency_s;
  x.transfer_s = chosen.transfer_s;
  x.bound = "all-to-all";
}

}  // namespace

const char* to_string(EpKernel kernel) {
  return kernel == EpKernel::nccl ? "nccl" : kernel == EpKernel::low_latency ? "low-latency" : "normal";
}
const char* to_string(MoeOp op) { return op == MoeOp::dispatch ? "moe-dispatch" : "moe-combine"; }

EpKernel parse_ep_kernel(const std::string& text) {
  if (text == "nccl") return EpKernel::nccl;
  if (text == "low-latency") return EpKernel::low_latency;
  if (text == "normal") return EpKernel::normal;
  throw InputError("unknown EP kernel '" + text + "' (nccl, low-latency or normal)");
}

MoeExchange estimate_moe_exchange(const topologies::Topology& topology, const CommGroup& group, const Workload& w,
                                  const MoeExchangeRequest& request) {
  if (group.ranks < 1 || group.gpus.empty()) throw InputError("an EP group needs at least one GPU");
  if (!group.uniform) throw InputError("expert parallelism needs the same number of EP GPUs in every node");
  MoeExchange x;
  x.op = request.op;
  x.kernel = request.kernel;
  x.dtype = !request.dtype.empty() ? request.dtype : request.op == MoeOp::dispatch ? "fp8" : "bf16";
  const ExpertPlacement placement{group.ranks, group.ranks_per_domain, request.redundant_experts, request.skew};
  x.routing = expert_routing(w, placement, request.tokens_per_gpu);
  x.message_bytes = moe_message_bytes(w, request.op, request.kernel, x.dtype);
  if (request.kernel == EpKernel::low_latency) cost_low_latency(topology, group, x);
  if (request.kernel == EpKernel::normal) cost_normal(topology, group, x);
  if (request.kernel == EpKernel::nccl) {
    if (group.ranks > 1)
      cost_nccl(group, x);
    else
      x.bound = "local";
  }
  if (request.tokens_per_gpu == 0) x.latency_s = x.transfer_s = 0;
  x.time_s = x.latency_s + x.transfer_s;
  return x;
}

}  // namespace treering::model

namespace treering::model {
namespace {

// Each rank's position among its domain's ranks.
std::vector<int> local_indices(const std::vector<int>& domain_of_rank) {
  std::vector<int> local(domain_of_rank.size());
  for (size_t r = 0; r < domain_of_rank.size(); ++r) {
    local[r] = static_cast<int>(
        std::count(domain_of_rank.begin(), domain_of_rank.begin() + static_cast<long>(r), domain_of_rank[r]));
  }
  return local;
}

// The flows of a dispatch (into the busiest GPU, rank 0, busiest_factor x the mean; nccl's are padded already).
std::vector<MoeFlow> dispatch_flows(const std::vector<int>& domain, const MoeExchange& x) {
  const int n = static_cast<int>(domain.size());
  const ExpertRouting& r = x.routing;
  const std::vector<int> local = local_indices(domain);
  std::vector<MoeFlow> flows;
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      const size_t f = static_cast<size_t>(from), t = static_cast<size_t>(to);
      const bool same_domain = domain[f] == domain[t];
      double bytes = 0;
      if (x.kernel == EpKernel::low_latency) bytes = x.nic_bytes_per_gpu / n;
      if (x.kernel == EpKernel::nccl && from != to) bytes = x.busiest_bytes / n;
      if (x.kernel == EpKernel::normal && same_domain && from != to)
        bytes = x.nvlink_bytes_per_gpu /
                std::max(1, static_cast<int>(std::count(domain.begin(), domain.end(), domain[f])) - 1);
      if (x.kernel == EpKernel::normal && !same_domain && local[f] == local[t])
        bytes = r.tokens_per_gpu * r.node_probability * x.message_bytes;
      if (bytes <= 0) continue;
      if (to == 0 && x.kernel != EpKernel::nccl) bytes *= r.busiest_factor;
      flows.push_back({from, to, bytes, x.kernel == EpKernel::low_latency});
    }
  }
  return flows;
}

}  // namespace

std::vector<MoeFlow> moe_exchange_flows(const std::vector<int>& domain_of_rank, const MoeExchange& exchange) {
  std::vector<MoeFlow> flows = dispatch_flows(domain_of_rank, exchange);
  if (exchange.op == MoeOp::combine) {
    for (MoeFlow& flow : flows) std::swap(flow.from, flow.to);  // the results go back the way the tokens came
  }
  return flows;
}

}  // namespace treering::model
