// DecodeModel::evaluate: each phase of a plan timed on the cluster, in order (phases do not overlap, except
// the ring's transfers with its compute, inside its pass).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "decode_context.hpp"
#include "treering/model/decode_algorithms.hpp"

namespace treering::model {
namespace detail {

void add_communication(Context& c, const std::string& label, double time_s, bool inter_node, const std::string& how,
                       bool latency_bound) {
  (inter_node ? c.result.breakdown.inter_node_s : c.result.breakdown.intra_node_s) += time_s;
  if (inter_node && latency_bound) c.result.breakdown.inter_node_latency_bound_s += time_s;
  c.result.phases.push_back({label, time_s, inter_node, how});
}

void add_compute(Context& c, const std::string& label, double time_s) {
  c.result.breakdown.compute_s += time_s;
  c.result.phases.push_back({label, time_s, false, "compute"});
}

void add_host(Context& c, const std::string& label, double time_s) {
  c.result.breakdown.host_s += time_s;
  c.result.phases.push_back({label, time_s, false, "host"});
}

void count_send(Context& c, int from, int to, double bytes) {
  c.sent[static_cast<size_t>(from)] += bytes;
  (c.model.crosses_domains(from, to) ? c.result.volume.inter_node : c.result.volume.intra_node) += bytes;
}

double Context::edge_share_Bps(int rank) const {
  if (!sharing || sharing->edge_share_Bps.size() <= phase) return 0.0;
  const std::vector<double>& shares = sharing->edge_share_Bps[phase];
  return shares.empty() ? 0.0 : shares[static_cast<size_t>(rank)];
}

double Context::shared_bound_s() const {
  return sharing && sharing->bound_s.size() > phase ? sharing->bound_s[phase] : 0.0;
}

bool Context::shared_bound_scale_out() const {
  return sharing && sharing->bound_scale_out.size() > phase && sharing->bound_scale_out[phase] != 0;
}

}  // namespace detail

namespace {

using namespace detail;

void evaluate_attend(Context& c, const Phase& phase) {
  double slowest = 0;
  for (int rank = 0; rank < c.ranks(); ++rank) {
    slowest = std::max(slowest, attention_time_s(c.rates[static_cast<size_t>(rank)], c.plan.workload, c.plan.sizes,
                                                 c.plan.shards[static_cast<size_t>(rank)].count));
  }
  add_compute(c, phase.label, slowest);
}

void evaluate_collective(Context& c, const Phase& phase) {
  const CollectiveEstimate estimate = c.model.collective(phase);
  // The network's share (its step latencies, and the transfer when the NICs pace it) counts as inter-node,
  // the rest (base latency, NVLink steps, in-switch reduction) as intra-node.
  const std::string how = std::string(to_string(estimate.chosen.algorithm)) + "/" + to_string(estimate.chosen.protocol);
  const double inter_s = estimate.chosen.inter_node_s;
  // The implementation's host-side cost per call (collective_call_s) comes first, with the base latency.
  const double intra_s = estimate.chosen.time_s - inter_s + c.plan.costs.collective_call_s;
  if (intra_s > 0) add_communication(c, phase.label, intra_s, false, how);
  if (inter_s > 0) {
    add_communication(c, phase.label + " (network part)", inter_s, true, how,
                      estimate.chosen.latency_s >= estimate.chosen.transfer_s);
  }
  // Links shared with other groups: the flows move no faster than everything crossing the busiest of them.
  const double shared_s = c.shared_bound_s() - estimate.chosen.transfer_s;
  if (shared_s > 0)
    add_communication(c, phase.label + " (links shared with other groups)", shared_s, c.shared_bound_scale_out(), how);
  for (double& bytes : c.sent) bytes += estimate.scale_up_bytes_per_gpu + estimate.scale_out_bytes_per_gpu;
  c.result.volume.intra_node += estimate.scale_up_bytes_per_gpu * c.ranks();
  c.result.volume.inter_node += estimate.scale_out_bytes_per_gpu * c.ranks();
}

// Point-to-point sends, all at once: sends that leave a GPU by the same link (its port) go one after another,
// and so do sends that enter a GPU by the same link, and sends across domains through the same NIC (GPUs that
// share one), each after its latency; the busiest port sets the phase's time. (In a full mesh each peer has its own
// link: nothing waits.) Then each receiver merges. Each port is a queue: sends arrive at their start + latency and take
// bytes / bandwidth in turn, so sends that start together take the latency plus all their transfers, and sends that
// start apart (after pass-q's ring, where ranks finish hops apart: Context::ready_offset_s) wait only for what is still
// ahead of them. Example: tree-lse's broadcast of o (4 KiB) from one H100 to the 7 others of its node: the root's port
// carries 7 x 4 KiB at 360 GB/s = 80 ns, but each send runs on one NCCL channel (15 GB/s: nccl_p2p_channels), so each
// takes 4096 / 15e9 = 273 ns after the 11.7 us latency, all at once (7 x 15 GB/s fit in the port).
// A rank's sends across domains leave one proxy post apart (DecodeModel::group_send_latencies_s).
void evaluate_transfers(Context& c, const Phase& phase) {
  std::vector<int> network_posted(static_cast<size_t>(c.ranks()), 0);  // per sender: its network sends so far

  struct Arrival {
    double at_s, port_s, alone_s;  // when it reaches the port; its bytes at the link's rate; at its own cap
  };
  std::unordered_map<long long, std::vector<Arrival>> port;  // by port key (the slowest port counts, in any order)
  port.reserve(2 * static_cast<size_t>(c.ranks()));
  bool crosses = false;
  double latency_s = 0;  // the longest of the sends' latencies
  for (const Transfer& send : phase.sends) {
    const DecodeModel::PairCost& pair = c.model.p2p(send.from, send.to);
    topologies::SizeBand cost = pair.at(send.bytes);
    cost.latency_s =
        c.model.group_send_latency_s(send.from, send.to, send.bytes, network_posted[static_cast<size_t>(send.from)]);
    // A send held below its link by its NCCL channels leaves the rest of the port to the others.
    const double link_Bps = pair.bands.empty() ? pair.bandwidth_Bps : cost.bandwidth_Bps;
    const double start_s = c.ready_offset_s.empty() ? 0.0 : c.ready_offset_s[static_cast<size_t>(send.from)];
    const auto [out, in] = c.model.ports(send.from, send.to);
    const auto [nic_out, nic_in] = c.model.nic_ports(send.from, send.to);  // NICs the GPUs may share
    const long long keys[4] = {out, in, nic_out, nic_in};  // a mesh pair's own link (a key < 0) is both its ports
    for (int k = 0; k < 4; ++k) {
      if ((k >= 2 && keys[k] < 0) || std::find(keys, keys + k, keys[k]) != keys + k) continue;
      port[keys[k]].push_back({start_s + cost.latency_s, send.bytes / link_Bps, send.bytes / cost.bandwidth_Bps});
    }
    crosses = crosses || c.model.crosses_domains(send.from, send.to);
    latency_s = std::max(latency_s, cost.latency_s);
    count_send(c, send.from, send.to, send.bytes);
  }
  c.ready_offset_s.clear();
  const double shared_s = c.shared_bound_s();  // links shared with other groups: everything they carry
  double slowest = shared_s > 0 ? latency_s + shared_s : 0.0;
  for (auto& [link, arrivals] : port) {
    std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) { return a.at_s < b.at_s; });
    double free_s = arrivals.front().at_s;
    for (const Arrival& arrival : arrivals) {
      free_s = std::max(free_s, arrival.at_s) + arrival.port_s;
      slowest = std::max({slowest, free_s, arrival.at_s + arrival.alone_s});
    }
  }
  add_communication(c, phase.label, slowest, crosses, "p2p", latency_s >= slowest - latency_s);
  if (phase.merge_states > 0) {
    add_compute(c, "merge (o, lse)",
                kernel_time_s(c.slowest, phase.merge_states * phase.merge_fraction * c.plan.sizes.state_bytes));
  }
}

void fill_memory(Context& c) {
  const Workload& w = c.plan.workload;
  const PlanSizes& s = c.plan.sizes;
  long long largest = 0;
  for (const Shard& shard : c.plan.shards) largest = std::max(largest, shard.count);
  DecodeMemory& m = c.result.memory;
  m.kv_cache = w.layers * largest * s.kv_bytes_per_token / c.plan.costs.kv_expansion;  // cached as the workload's heads
  // q, o and lse (the ring's running state too); the rest is the combine's own (its descriptor's buffers).
  m.partial_states = s.q_bytes + s.o_bytes + s.stats_bytes;
  const CombineBuffers combine = algorithm_info(c.plan).buffers(c.plan, largest);
  m.workspace = combine.workspace_bytes;
  m.receive_buffers = combine.receive_bytes;
  m.weights = w.parameters * (w.mean_weight_bytes > 0 ? w.mean_weight_bytes : w.dtype_bytes);
  m.total = m.kv_cache + m.receive_buffers + m.partial_states + m.workspace + m.weights;
}

}  // namespace

DecodeResult DecodeModel::evaluate(const DecodePlan& plan, const GroupSharing* sharing) const {
  DecodeResult result;
  result.algorithm = plan.algorithm;
  result.seq_len = plan.seq_len;
  result.gpus = static_cast<int>(plan.gpus.size());
  result.domains = group_.domains;
  result.impl = plan.costs.profile_or_default().name;
  Context c{*this, plan,    result, std::vector<double>(plan.gpus.size(), 0.0), {}, plan_rates(slowest_, plan),
            {},    sharing, 0};
  for (const ComputeRates& rates : rates_) c.rates.push_back(plan_rates(rates, plan));
  double once_s = 0;
  for (const Phase& phase : plan.phases) {
    c.phase = static_cast<size_t>(&phase - plan.phases.data());
    if (phase.kind != PhaseKind::transfers) c.ready_offset_s.clear();
    switch (phase.kind) {
      case PhaseKind::attend: evaluate_attend(c, phase); break;
      case PhaseKind::ring_pass: evaluate_ring(c, phase); break;
      case PhaseKind::q_ring: evaluate_q_ring(c, phase); break;
      case PhaseKind::collective: evaluate_collective(c, phase); break;
      case PhaseKind::transfers: evaluate_transfers(c, phase); break;
      case PhaseKind::merge:
        add_compute(c, phase.label, kernel_time_s(c.slowest, phase.merge_states * plan.sizes.state_bytes));
        break;
      case PhaseKind::elementwise:
        add_compute(c, phase.label, kernel_time_s(c.slowest, phase.bytes) + (phase.kernels - 1) * c.slowest.launch_s);
        break;
      case PhaseKind::host:
        add_host(c, phase.label, phase.time_s);
        once_s += phase.once_per_call ? phase.time_s : 0.0;
        break;
    }
  }
  result.volume.per_gpu = *std::max_element(c.sent.begin(), c.sent.end());
  result.volume.total = result.volume.intra_node + result.volume.inter_node;
  result.latency_s = result.breakdown.compute_s + result.breakdown.intra_node_s + result.breakdown.inter_node_s +
                     result.breakdown.host_s;
  fill_memory(c);
  // The weights are read once per token; the layer's other kernels (projections, norms, MLP) each pay a launch.
  const Workload& w = plan.workload;
  result.weights_s = w.parameters * (w.mean_weight_bytes > 0 ? w.mean_weight_bytes : w.dtype_bytes) / slowest_.hbm_Bps +
                     plan.workload.layers * plan.costs.other_kernels_per_layer * c.slowest.launch_s;
  result.first_call_s = once_s;
  result.token_s = token_time_s(plan, result);
  return result;
}

double token_time_s(const DecodePlan& plan, const DecodeResult& layer) {
  const double once_s = layer.first_call_s;
  const double token_s = plan.workload.layers * (layer.latency_s - once_s) + once_s + layer.weights_s;
  if (!plan.costs.eager_dispatch_s) return token_s;
  // An eager framework issues the token's kernels one by one from the host, and waits at each host round
  // trip: the step takes at least that long, however short the kernels. Example: 49 kernels per layer at
  // 25 us, 32 layers, one 5.8 us round trip per layer: 32 x (49 x 25 + 5.8) us = 39.4 ms.
  const double host_per_layer_s =
      kernels_per_layer(plan) * *plan.costs.eager_dispatch_s + (layer.breakdown.host_s - once_s);
  return std::max(token_s, plan.workload.layers * host_per_layer_s + once_s);
}

}  // namespace treering::model
