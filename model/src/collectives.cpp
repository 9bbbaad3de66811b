// Collective cost model (see collectives.hpp). Notation: S bytes, n ranks, k domains, g ranks per domain;
// L(row, protocol) latencies from the group's table. Bandwidths are the group's effective tier figures; across
// domains NCCL's per-protocol caps, tree correction and channel narrowing apply (nccl_rates.hpp), inside one
// domain the protocol factor (NCCL: LL carries 8 data bytes per 16 -> 0.5, LL128 0.92, Simple 1).
// Worked example (2 nodes x 8 H100, all-reduce of 8 B, tree/LL): 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0)
// = 25.2 us, NCCL's own figure, against 24.7-25.0 us measured (nccl-tests issue #309).
#include "treering/model/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "nccl_rates.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();
constexpr double kP2pLlThresholdBytes = 16384;  // NCCL_P2P_LL_THRESHOLD x 1 channel (src/enqueue.cc)

struct Cost {
  double latency_s = kInfinite;  // infinite: this algorithm/protocol cannot run here
  double transfer_s = 0;
  double scale_up_bytes = 0;
  double scale_out_bytes = 0;
  double network_latency_s = 0;  // network steps within latency_s
  double nccl_latency_s = -1;    // what NCCL's tuner charges, when it differs (it picks by it); -1: latency_s
  bool network_bound = false;    // the transfer is paced by the NICs
  double efficiency = 0;         // achieved over the tiers' rate (0: the protocol's factor)
  double network_s() const { return network_latency_s + (network_bound ? transfer_s : 0.0); }
};

struct Terms {
  const CommGroup& group;
  CollectiveOp op;
  Protocol protocol;
  double S;  // bytes
  double n, k, g;
  double base(LatencyRow row) const { return group.latency.base[int(row)][int(protocol)]; }
  double up(LatencyRow row) const { return group.latency.scale_up_step[int(row)][int(protocol)]; }
  double out(LatencyRow row) const { return group.latency.scale_out_step[int(row)][int(protocol)]; }
  double nccl_ring_out() const { return group.latency.nccl_ring_scale_out_step[int(protocol)]; }  // NCCL's tuner's
  double factor() const { return protocol_efficiency(protocol); }
  // The tiers' bus bandwidth: the fabric inside each domain and, across domains, the domain's NICs.
  double tier_Bps() const { return std::min(group.scale_up_bus_Bps, k > 1 ? group.scale_out_domain_Bps : kInfinite); }
  // What a ring (or tree) of S bytes gets of it with this protocol (NCCL's caps, correction and channels).
  double ring_Bps(CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring) const {
    return nccl_bus_Bps(group, op, algorithm, protocol, tier_Bps(), S);
  }
  double ring_efficiency(CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring) const {
    return ring_Bps(algorithm) / tier_Bps();
  }
  bool ring_network_bound() const { return k > 1 && group.scale_out_domain_Bps < group.scale_up_bus_Bps; }
  // Pairwise exchanges (recursive doubling): a GPU's own share of the NICs across domains.
  double pairwise_Bps() const {
    return std::min(group.scale_up_bus_Bps, k > 1 ? group.scale_out_gpu_Bps : kInfinite) * factor();
  }
  double log2k() const { return std::floor(std::log2(k)); }  // NCCL's log2i: whole levels
  double steps_log2n() const { return std::ceil(std::log2(n)); }
  double cross_share() const { return k > 1 ? k / n : 0.0; }  // ring edges that leave a domain
};

Cost ring_pass(const Terms& t, double S, double passes) {
  // `passes` rounds of n-1 steps (all-reduce 2, all-gather/reduce-scatter 1). NCCL's tuner counts k-1 network
  // steps per pass; the time is set by the longest chain of dependent steps: a block moves one ring edge per
  // step, so the chain of passes x (n-1) consecutive edges that holds the most domain boundaries (one every g
  // edges on uniform domains) holds ceil(passes (n-1) / g) of them. Example: all-gather on 2 nodes x 8: the
  // block of the second GPU of node 0 crosses into node 1 and back (2 network steps, 13 inside), NCCL counts 1.
  Cost cost;
  const double steps = passes * (t.n - 1);
  const double nccl_out_steps = passes * (t.k - 1);
  const double out_steps = t.k > 1 && t.group.uniform ? std::min(steps, std::ceil(steps / t.g)) : nccl_out_steps;
  // NCCL: across nodes an intra step costs at least the network proxy's post overhead (1 us, 2 on AMD hosts;
  // x3 for Simple), and ring/Simple latency is x1.4 on multi-node runs (x1.9 below SM80).
  const double post_overhead = t.k > 1 ? (t.protocol == Protocol::simple ? 3 : 1) * t.group.nccl.network_post_s : 0.0;
  const double plateau = t.group.nccl.rows.gpu == NcclGpuRow::volta ? 1.9 : 1.4;
  const double multi_node_factor = t.k > 1 && t.protocol == Protocol::simple ? plateau : 1.0;
  auto latency_s = [&](double network_steps, double network_step_s) {
    return multi_node_factor *
           (t.base(LatencyRow::ring) + (steps - network_steps) * std::max(t.up(LatencyRow::ring), post_overhead) +
            network_steps * network_step_s);
  };
  // NCCL picks by its tuner: its step count and its ring NET figure (LatencyTable::nccl_ring_scale_out_step).
  cost.latency_s = latency_s(out_steps, t.out(LatencyRow::ring));
  cost.nccl_latency_s = latency_s(nccl_out_steps, t.nccl_ring_out());
  cost.network_latency_s = out_steps * t.out(LatencyRow::ring) * multi_node_factor;
  cost.network_bound = t.ring_network_bound();
  const double sent = passes * (t.n - 1) / t.n * S;
  cost.transfer_s = sent / t.ring_Bps();
  cost.efficiency = t.ring_efficiency();
  cost.scale_out_bytes = sent * t.cross_share();
  cost.scale_up_bytes = sent - cost.scale_out_bytes;
  return cost;
}

Cost recursive_doubling(const Terms& t, double S, double passes) {
  // Recursive halving then doubling (Rabenseifner) for all-reduce (2 passes), one of them for the others. On a
  // power of two of ranks only (others need extra steps for the ranks left over, not modelled).
  Cost cost;
  const int n = t.group.ranks;
  if ((n & (n - 1)) != 0) return cost;
  const double hop = t.k > 1 ? t.out(LatencyRow::ring) : t.up(LatencyRow::ring);
  cost.latency_s = t.base(LatencyRow::ring) + passes * t.steps_log2n() * hop;
  cost.network_latency_s = t.k > 1 ? passes * t.steps_log2n() * hop : 0.0;
  cost.network_bound = t.k > 1 && t.group.scale_out_gpu_Bps < t.group.scale_up_bus_Bps;
  const double sent = passes * (t.n - 1) / t.n * S;
  cost.transfer_s = sent / t.pairwise_Bps();
  // With domain-contiguous ranks the first log2(k) halvings cross domains: S/2 + S/4 + ... = S (1 - 1/k).
  cost.scale_out_bytes = passes * S * (1.0 - 1.0 / t.k);
  cost.scale_up_bytes = std::max(0.0, sent - cost.scale_out_bytes);
  return cost;
}

// All-reduce with the network's switches reducing (SHARP: NCCL's CollNet, and NVLS across domains, which NCCL
// runs only with CollNet), where the cluster's network says so. Simple only. Latency (NCCL 2.30.7
// src/graph/tuning.cc ncclTopoTuneModel): NVLS intra + inter, 25 + 18 = 43 us; CollNet Direct
// 2 (min(1, g - 1) x 3.7 + (g - 1) x 0.4) + 31, 44.0 us with 8 GPUs a domain; CollNet Chain 2 (g - 1) x 2.8 + 30,
// 69.2 us; with one GPU a domain NCCL takes the tree's network figure (14 us) instead. None grows with the
// number of domains: the switches reduce. Bytes: each domain sends S up through its NICs and gets S back reduced
// (S / g a GPU, however many domains), pipelined with the part inside: NVLS reduces and broadcasts in the NVSwitch
// (S at its rate, plus its chunk pipeline's fill, nvls_sharp_fill_s), Direct scatters to and gathers from the g
// GPUs that lead a NIC each (2 (g - 1) / g x S a GPU over the fabric; every GPU leads a NIC, as on DGX nodes),
// Chain passes S down a chain of the g GPUs and back (2 S). The slower part sets the transfer.
// Worked example, 2 x DGX H100 (in-switch 270 GB/s, 8 x 46 GB/s NICs), NVLS at 1 GiB: 43 us + 186.4 us of fill +
// 1.074 GB / 270 GB/s = 4.206 ms; at 8 B CollNet Direct 44.0 us against the tree's 25.2 us.
constexpr double kCollNetArity_s = 0.4e-6;  // NCCL's "arity serialization latency" per GPU of a CollNet Direct domain
constexpr double kCollNetMaxRanksPerDomain =
    8;  // NCCL refuses CollNet beyond (src/enqueue.cc: Direct; Chain from 2.28)

Cost in_network_allreduce(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  Cost cost;
  const CommGroup& group = t.group;
  if (!group.in_network_reduction || !group.uniform || t.protocol != Protocol::simple) return cost;
  LatencyRow row = LatencyRow::nvls;
  double inside_latency_s = 0, inside_s = 0, fill_s = 0;
  switch (algorithm) {
    case CollectiveAlgorithm::nvls:  // NCCL turns NVLS off below 2 GPUs a node (src/transport/nvls.cc)
      if (!group.in_switch_reduction || t.g < 2) return cost;
      inside_latency_s = t.up(row);
      inside_s = S / group.in_switch_Bps;
      fill_s = nvls_sharp_fill_s(group, S, S / std::max(inside_s, S / group.scale_out_domain_Bps));
      break;
    case CollectiveAlgorithm::collnet_direct:
      if (!group.nvswitch || t.g > kCollNetMaxRanksPerDomain) return cost;
      row = LatencyRow::collnet_direct;
      inside_latency_s = 2 * (std::min(1.0, t.g - 1) * t.up(row) + (t.g - 1) * kCollNetArity_s);
      inside_s = 2 * (t.g - 1) / t.g * S / group.scale_up_bus_Bps;
      break;
    case CollectiveAlgorithm::collnet_chain:
      if (t.g > kCollNetMaxRanksPerDomain) return cost;
      row = LatencyRow::collnet_chain;
      inside_latency_s = 2 * (t.g - 1) * t.up(row);
      inside_s = t.g > 1 ? 2 * S / group.scale_up_bus_Bps : 0.0;
      break;
    default: return cost;
  }
  cost.network_latency_s = t.g > 1 ? t.out(row) : t.out(LatencyRow::tree);
  cost.latency_s = t.base(row) + inside_latency_s + cost.network_latency_s + fill_s;
  const double network_s = S / group.scale_out_domain_Bps;
  cost.transfer_s = std::max(network_s, inside_s);
  cost.network_bound = network_s >= inside_s;
  cost.scale_out_bytes = S / t.g;
  cost.scale_up_bytes =
      algorithm == CollectiveAlgorithm::nvls ? S : 2 * (t.g - 1) / t.g * S;  // a chain's GPUs on average
  return cost;
}

Cost allreduce(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  const CommGroup& group = t.group;
  Cost cost;
  switch (algorithm) {
    case CollectiveAlgorithm::ring: return ring_pass(t, S, 2);
    case CollectiveAlgorithm::recursive_doubling: return recursive_doubling(t, S, 2);
    case CollectiveAlgorithm::tree:
      // Chain inside each domain, double binary tree across domains; reduce then broadcast, pipelined.
      cost.latency_s =
          t.base(LatencyRow::tree) + 2 * ((t.g - 1) * t.up(LatencyRow::tree) + t.log2k() * t.out(LatencyRow::tree));
      cost.network_latency_s = 2 * t.log2k() * t.out(LatencyRow::tree);
      cost.network_bound = t.ring_network_bound();
      cost.transfer_s = 2 * S / t.ring_Bps(CollectiveAlgorithm::tree);
      cost.efficiency = t.ring_efficiency(CollectiveAlgorithm::tree);
      cost.scale_out_bytes = 2 * (t.k - 1) * S / t.n;
      cost.scale_up_bytes = 2 * (t.n - 1) / t.n * S - cost.scale_out_bytes;
      return cost;
    case CollectiveAlgorithm::collnet_direct:
    case CollectiveAlgorithm::collnet_chain: return in_network_allreduce(t, algorithm, S);
    case CollectiveAlgorithm::nvls:
      if (t.k > 1) return in_network_allreduce(t, algorithm, S);
      if (!group.in_switch_reduction) return cost;
      cost.latency_s = t.base(LatencyRow::nvls) + t.up(LatencyRow::nvls);
      cost.transfer_s = S / (group.in_switch_Bps * t.factor());
      cost.scale_up_bytes = S;
      return cost;
    case CollectiveAlgorithm::nvls_tree:
      // In-switch reduce-scatter, an all-reduce across domains of each GPU's share S/g (2 (k-1)/k x S/g per
      // GPU through the NICs: S/g at k = 2), in-switch all-gather: pipelined.
      if (!group.in_switch_reduction || t.k < 2 || t.g < 2 || !group.uniform) return cost;  // every GPU leads a rail
      // Latency: NCCL's constants plus the chunk pipeline's fill (nccl_rates.hpp).
      cost.transfer_s =
          S * std::max(1.0 / group.in_switch_Bps, 2 * (t.k - 1) / t.k / group.scale_out_domain_Bps) / t.factor();
      cost.latency_s = t.base(LatencyRow::nvls_tree) + t.up(LatencyRow::nvls_tree) +
                       2 * t.log2k() * t.out(LatencyRow::nvls_tree) +
                       (S > 0 ? nvls_tree_fill_s(group, S, S / cost.transfer_s) : 0.0);
      cost.network_latency_s = 2 * t.log2k() * t.out(LatencyRow::nvls_tree);
      cost.network_bound = 2 * (t.k - 1) / t.k * group.in_switch_Bps > group.scale_out_domain_Bps;
      cost.scale_up_bytes = S;
      cost.scale_out_bytes = 2 * (t.k - 1) / t.k * S / t.g;
      return cost;
    case CollectiveAlgorithm::hierarchical:
      // Reduce-scatter inside domains, all-reduce of S/g across domains per rail, all-gather inside: pipelined.
      if (t.k < 2 || !group.uniform) return cost;
      cost.latency_s =
          t.base(LatencyRow::ring) + 2 * (t.g - 1) * t.up(LatencyRow::ring) + 2 * (t.k - 1) * t.out(LatencyRow::ring);
      cost.scale_up_bytes = 2 * (t.g - 1) / t.g * S;
      cost.scale_out_bytes = 2 * (t.k - 1) / t.k * S / t.g;
      cost.transfer_s = std::max(cost.scale_up_bytes / (group.scale_up_bus_Bps * t.factor()),
                                 cost.scale_out_bytes / (group.scale_out_gpu_Bps * t.factor()));
      cost.network_latency_s = 2 * (t.k - 1) * t.out(LatencyRow::ring);
      cost.network_bound =
          cost.scale_out_bytes / group.scale_out_gpu_Bps > cost.scale_up_bytes / group.scale_up_bus_Bps;
      return cost;
    case CollectiveAlgorithm::p2p: return cost;
  }
  return cost;
}

Cost gather_or_scatter(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  if (algorithm == CollectiveAlgorithm::ring) return ring_pass(t, S, 1);
  if (algorithm == CollectiveAlgorithm::recursive_doubling) return recursive_doubling(t, S, 1);
  return {};
}

Cost broadcast(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  Cost cost;
  if (algorithm == CollectiveAlgorithm::ring) {  // a pipelined chain
    cost.network_latency_s = (t.k - 1) * t.out(LatencyRow::ring);
    cost.latency_s = t.base(LatencyRow::ring) + (t.n - t.k) * t.up(LatencyRow::ring) + cost.network_latency_s;
    cost.nccl_latency_s = cost.latency_s - cost.network_latency_s + (t.k - 1) * t.nccl_ring_out();
  } else if (algorithm == CollectiveAlgorithm::tree) {
    cost.network_latency_s = t.log2k() * t.out(LatencyRow::tree);
    cost.latency_s = t.base(LatencyRow::tree) + (t.g - 1) * t.up(LatencyRow::tree) + cost.network_latency_s;
  } else {
    return cost;
  }
  cost.network_bound = t.ring_network_bound();
  cost.transfer_s = S / t.ring_Bps();
  cost.efficiency = t.ring_efficiency();
  // A chain (or tree) of n ranks has n - 1 edges carrying S each; k - 1 of them cross domains.
  cost.scale_out_bytes = (t.k - 1) * S / t.n;
  cost.scale_up_bytes = (t.n - t.k) * S / t.n;
  return cost;
}

Cost sendrecv(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  // NCCL's p2p uses the Simple protocol: across nodes 8.4 + 14 + 3 (the shared buffer's post) + 5.0 (the
  // receiver's clear-to-send) = 30.4 us, against 27-31 us measured for 1-8 KiB between two B200 nodes on NDR
  // InfiniBand (NCCL 2.29.7) and 31-34 us between two A100 PCIe hosts (2.16.5) in public nccl-tests runs
  // (validate/data/nccl-multinode).
  Cost cost;
  if (algorithm != CollectiveAlgorithm::p2p || t.protocol != Protocol::simple) return cost;
  const bool across = t.k > 1;
  cost.latency_s = t.base(LatencyRow::p2p) +
                   (across ? t.out(LatencyRow::p2p) + 3 * t.group.nccl.network_post_s + network_clear_to_send_s(t.group)
                           : t.up(LatencyRow::p2p));
  // Inside a domain a send runs on the channels NCCL gives its size (p2p_send_Bps).
  cost.transfer_s = S / (across ? t.group.scale_out_nic_Bps : p2p_send_Bps(t.group.p2p, S, t.group.scale_up_pair_Bps));
  (across ? cost.scale_out_bytes : cost.scale_up_bytes) = S;
  cost.network_latency_s = across ? cost.latency_s : 0.0;
  cost.network_bound = across;
  return cost;
}

// All-to-all (see collectives.hpp): the protocol is NCCL's pick by size and hop, not a choice; both hop kinds
// run at once, the slower sets the time.
Cost alltoall(const Terms& t, CollectiveAlgorithm algorithm, double S) {
  Cost cost;
  if (algorithm != CollectiveAlgorithm::p2p) return cost;
  const double per_peer = S / t.n;
  const bool across = t.k > 1;
  const Protocol inside_protocol = per_peer <= kP2pLlThresholdBytes ? Protocol::ll : Protocol::simple;
  if (t.protocol != (across ? Protocol::simple : inside_protocol)) return cost;
  const double inside_peers = t.g - 1, outside_peers = t.n - t.g;
  const auto row = int(LatencyRow::p2p);
  const double inside_latency_s =
      t.group.latency.base[row][int(inside_protocol)] + t.group.latency.scale_up_step[row][int(inside_protocol)];
  // The peers' sends run at once, each on its own channels, at most all of NCCL's p2p channels together.
  double inside_Bps = t.group.scale_up_pair_Bps * protocol_efficiency(inside_protocol);
  const P2pCommunicator& p2p = t.group.p2p;
  if (p2p.channel_Bps > 0 && inside_peers > 0) {
    const int channels = nccl_p2p_channels(per_peer, p2p.ranks, p2p.hosts, p2p.all_nvlink);
    inside_Bps = std::min(inside_Bps, std::min<double>(kNcclP2pChannels, inside_peers * channels) * p2p.channel_Bps);
  }
  const double inside_s = inside_peers * per_peer / inside_Bps;
  // What the links alone would take: with fewer channels than the pair's link holds, the rest is NCCL's limit
  // (the simulator then caps each flow at the model's rate: collective_flows.hpp).
  const double inside_link_s =
      inside_peers * per_peer / (t.group.scale_up_pair_Bps * protocol_efficiency(inside_protocol));
  cost.latency_s = inside_latency_s;
  cost.transfer_s = inside_s;
  if (across) {
    const double network_latency_s = t.base(LatencyRow::p2p) + t.out(LatencyRow::p2p) +
                                     network_clear_to_send_s(t.group) + outside_peers * 3 * t.group.nccl.network_post_s;
    // Every rank sends at once: GPUs that share a NIC share its rate (scale_out_gpu_Bps: the domain's NICs over
    // its ranks). Example: 8 GPUs on 4 NICs of 46 GB/s: 23 GB/s each.
    const double network_s = outside_peers * per_peer / std::min(t.group.scale_out_nic_Bps, t.group.scale_out_gpu_Bps);
    cost.latency_s = std::max(inside_latency_s, network_latency_s);
    cost.transfer_s = std::max(inside_s, network_s);
    cost.network_latency_s = network_latency_s;
    cost.network_bound = network_s >= inside_s;
  }
  const double link_s = std::max(
      inside_link_s,
      across ? outside_peers * per_peer / std::min(t.group.scale_out_nic_Bps, t.group.scale_out_gpu_Bps) : 0.0);
  if (cost.transfer_s > link_s && cost.transfer_s > 0)
    cost.efficiency = protocol_efficiency(t.protocol) * link_s / cost.transfer_s;
  cost.scale_up_bytes = inside_peers * per_peer;
  cost.scale_out_bytes = outside_peers * per_peer;
  return cost;
}

}  // namespace

double network_clear_to_send_s(const CommGroup& group) {
  return group.latency.scale_out_step[int(LatencyRow::p2p)][int(Protocol::ll)];
}

namespace {

Cost evaluate(const CommGroup& group, CollectiveOp op, CollectiveAlgorithm algorithm, Protocol protocol, double S) {
  Terms terms{group, op, protocol, S, double(group.ranks), double(group.domains), double(group.ranks_per_domain)};
  switch (op) {
    case CollectiveOp::allreduce: return allreduce(terms, algorithm, S);
    case CollectiveOp::allgather:
    case CollectiveOp::reduce_scatter: return gather_or_scatter(terms, algorithm, S);
    case CollectiveOp::broadcast: return broadcast(terms, algorithm, S);
    case CollectiveOp::sendrecv: return sendrecv(terms, algorithm, S);
    case CollectiveOp::alltoall: return alltoall(terms, algorithm, S);
  }
  return {};
}

double bus_factor(CollectiveOp op, double n) {
  switch (op) {
    case CollectiveOp::allreduce: return 2 * (n - 1) / n;
    case CollectiveOp::allgather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::alltoall: return (n - 1) / n;
    default: return 1.0;
  }
}

// NCCL's own choices: no hierarchical or recursive doubling, and broadcast by ring only.
bool in_set(CollectiveOp op, CollectiveAlgorithm algorithm, AlgorithmSet allowed) {
  if (allowed == AlgorithmSet::all) return true;
  if (op == CollectiveOp::broadcast && algorithm == CollectiveAlgorithm::tree) return false;
  return algorithm != CollectiveAlgorithm::hierarchical && algorithm != CollectiveAlgorithm::recursive_doubling;
}

}  // namespace

double protocol_efficiency(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll: return 0.5;
    case Protocol::ll128: return 0.92;  // NCCL's factor (120 of 128 bytes carry data, less flag handling)
    case Protocol::simple: return 1.0;
  }
  return 1.0;
}

CollectiveEstimate estimate_collective(const CommGroup& group, const CollectiveRequest& request) {
  if (!(request.bytes >= 0) || !std::isfinite(request.bytes))
    throw topologies::InputError("the size must be a non-negative number of bytes");
  if (request.op == CollectiveOp::sendrecv && group.ranks != 2) {
    throw topologies::InputError("send/recv needs a group of exactly 2 GPUs, got " + std::to_string(group.ranks));
  }
  CollectiveEstimate estimate;
  estimate.op = request.op;
  estimate.bytes = request.bytes;
  if (group.ranks < 2) return estimate;  // nothing to exchange
  double chosen_nccl_s = 0;
  for (int a = 0; a <= static_cast<int>(CollectiveAlgorithm::p2p); ++a) {
    const auto algorithm = static_cast<CollectiveAlgorithm>(a);
    if (request.algorithm ? *request.algorithm != algorithm : !in_set(request.op, algorithm, request.allowed)) continue;
    for (int p = 0; p < kProtocols; ++p) {
      const auto protocol = static_cast<Protocol>(p);
      if (request.protocol && *request.protocol != protocol) continue;
      Cost cost = evaluate(group, request.op, algorithm, protocol, request.bytes);
      if (!std::isfinite(cost.latency_s) || !std::isfinite(cost.transfer_s)) continue;
      // Of the transfer, what the links at the protocol's factor would take; the rest is NCCL's limits.
      const double link_share =
          cost.efficiency > 0 ? std::min(1.0, cost.efficiency / protocol_efficiency(protocol)) : 1.0;
      estimate.candidates.push_back({algorithm, protocol, cost.latency_s + cost.transfer_s, cost.latency_s,
                                     cost.transfer_s, cost.network_s(), cost.transfer_s * (1 - link_share)});
      // NCCL picks by its own tuner's time, which may count fewer steps than the run takes (ring_pass).
      const double nccl_s = (cost.nccl_latency_s >= 0 ? cost.nccl_latency_s : cost.latency_s) + cost.transfer_s;
      if (estimate.candidates.size() == 1 || nccl_s < chosen_nccl_s) {
        chosen_nccl_s = nccl_s;
        estimate.chosen = estimate.candidates.back();
        estimate.scale_up_bytes_per_gpu = cost.scale_up_bytes;
        estimate.scale_out_bytes_per_gpu = cost.scale_out_bytes;
      }
    }
  }
  if (estimate.candidates.empty()) {
    throw topologies::InputError(std::string("no ") + (request.algorithm ? to_string(*request.algorithm) : "") +
                                 (request.protocol ? std::string("/") + to_string(*request.protocol) : "") + " " +
                                 to_string(request.op) + " can run on this group of GPUs" +
                                 (request.algorithm ? requirements(*request.algorithm) : ""));
  }
  std::stable_sort(estimate.candidates.begin(), estimate.candidates.end(),
                   [](const CollectiveCandidate& a, const CollectiveCandidate& b) { return a.time_s < b.time_s; });
  if (estimate.chosen.time_s > 0) {
    estimate.algorithm_bandwidth_Bps = request.bytes / estimate.chosen.time_s;
    estimate.bus_bandwidth_Bps = estimate.algorithm_bandwidth_Bps * bus_factor(request.op, group.ranks);
  }
  return estimate;
}

}  // namespace treering::model
