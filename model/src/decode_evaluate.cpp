// DecodeModel::evaluate: each phase of a plan timed on the cluster, in order (phases do not overlap, except
// the ring's transfers with its compute, inside its pass).
#include <algorithm>
#include <map>

#include "treering/model/decode.hpp"

namespace treering::model {
namespace {

struct Context {
  const DecodeModel& model;
  const DecodePlan& plan;
  DecodeResult& result;
  int ranks() const { return static_cast<int>(plan.gpus.size()); }
};

void add_communication(Context& c, const std::string& label, double time_s, bool inter_node, const std::string& how) {
  (inter_node ? c.result.breakdown.inter_node_s : c.result.breakdown.intra_node_s) += time_s;
  c.result.phases.push_back({label, time_s, inter_node, how});
}

void add_compute(Context& c, const std::string& label, double time_s) {
  c.result.breakdown.compute_s += time_s;
  c.result.phases.push_back({label, time_s, false, "compute"});
}

void count_send(Context& c, std::vector<double>& sent, int from, int to, double bytes) {
  sent[static_cast<size_t>(from)] += bytes;
  (c.model.crosses_domains(from, to) ? c.result.volume.inter_node : c.result.volume.intra_node) += bytes;
}

void evaluate_attend(Context& c, const Phase& phase) {
  double slowest = 0;
  for (int rank = 0; rank < c.ranks(); ++rank) {
    slowest = std::max(slowest, attention_time_s(c.model.rates(rank), c.plan.workload, c.plan.sizes,
                                                 c.plan.shards[static_cast<size_t>(rank)].count));
  }
  add_compute(c, phase.label, slowest);
}

// The ring: in round r (0 .. p-2) rank i attends to the block it holds, (i - r) mod p, merging it into its
// running state, while sending that block to rank i + 1; then it attends to the last block it received.
// The paper's code rotates p times (its eq. 10 counts p transfers); the p-th rotation only returns every
// block to its owner and is left out here.
void evaluate_ring(Context& c, const Phase& phase, std::vector<double>& sent) {
  const int p = c.ranks();
  const auto& shards = c.plan.shards;
  const double kv = c.plan.sizes.kv_bytes_per_token;
  const double merge_bytes = 2 * c.plan.sizes.state_bytes;  // the fused merge reads and writes the running state
  const bool even = std::all_of(shards.begin(), shards.end(), [&](const Shard& s) { return s.count == shards[0].count; });
  auto block = [&](int rank, int round) { return shards[static_cast<size_t>(((rank - round) % p + p) % p)].count; };
  double compute_s = 0, exposed_s = 0, overlapped_s = 0, exposed_inter_s = 0;
  for (int round = 0; round < p - 1; ++round) {
    if (even && round > 0) break;  // every round is the same: counted p - 1 times below
    double slowest_compute = 0, slowest_transfer = 0;
    bool slowest_crosses = false;
    for (int rank = 0; rank < p; ++rank) {
      const long long tokens = block(rank, round);
      slowest_compute = std::max(slowest_compute, attention_time_s(c.model.rates(rank), c.plan.workload, c.plan.sizes,
                                                                   tokens, merge_bytes));
      const double transfer = tokens > 0 ? c.model.p2p(rank, (rank + 1) % p, tokens * kv).time_s : 0.0;
      if (transfer > slowest_transfer) {
        slowest_transfer = transfer;
        slowest_crosses = c.model.crosses_domains(rank, (rank + 1) % p);
      }
    }
    const double repeat = even ? p - 1 : 1;
    compute_s += repeat * slowest_compute;
    exposed_s += repeat * std::max(0.0, slowest_transfer - slowest_compute);
    if (slowest_crosses) exposed_inter_s += repeat * std::max(0.0, slowest_transfer - slowest_compute);
    overlapped_s += repeat * std::min(slowest_transfer, slowest_compute);
  }
  double last_compute = 0;
  for (int rank = 0; rank < p; ++rank) {
    last_compute = std::max(last_compute, attention_time_s(c.model.rates(rank), c.plan.workload, c.plan.sizes,
                                                           block(rank, p - 1), merge_bytes));
  }
  for (int rank = 0; rank < p && p > 1; ++rank) {
    // Rank i forwards every block but the one its successor owns: N - shard(i + 1) tokens.
    count_send(c, sent, rank, (rank + 1) % p, (c.plan.seq_len - shards[static_cast<size_t>((rank + 1) % p)].count) * kv);
  }
  add_compute(c, phase.label + " (attention and merges)", compute_s + last_compute);
  c.result.breakdown.overlapped_communication_s += overlapped_s;
  if (exposed_inter_s > 0) add_communication(c, phase.label + " (transfers not hidden, network)", exposed_inter_s, true, "p2p");
  if (exposed_s - exposed_inter_s > 0) {
    add_communication(c, phase.label + " (transfers not hidden, fabric)", exposed_s - exposed_inter_s, false, "p2p");
  }
}

void evaluate_collective(Context& c, const Phase& phase, std::vector<double>& sent) {
  CollectiveRequest request;
  request.op = phase.op;
  request.bytes = phase.bytes;
  const CollectiveEstimate estimate = estimate_collective(c.model.group(), request);
  add_communication(c, phase.label, estimate.chosen.time_s, c.model.group().domains > 1,
                    std::string(to_string(estimate.chosen.algorithm)) + "/" + to_string(estimate.chosen.protocol));
  for (double& bytes : sent) bytes += estimate.scale_up_bytes_per_gpu + estimate.scale_out_bytes_per_gpu;
  c.result.volume.intra_node += estimate.scale_up_bytes_per_gpu * c.ranks();
  c.result.volume.inter_node += estimate.scale_out_bytes_per_gpu * c.ranks();
}

// Point-to-point sends, all at once: a receiver takes its incoming sends one after another (they share its
// port), after the longest latency among them; then it merges.
void evaluate_transfers(Context& c, const Phase& phase, std::vector<double>& sent) {
  std::map<int, std::pair<double, double>> receiver;  // rank -> (latest latency, sum of transfer times)
  bool crosses = false;
  for (const Transfer& send : phase.sends) {
    const CollectiveCandidate cost = c.model.p2p(send.from, send.to, send.bytes);
    auto& [latency_s, transfer_s] = receiver[send.to];
    latency_s = std::max(latency_s, cost.latency_s);
    transfer_s += cost.transfer_s;
    crosses = crosses || c.model.crosses_domains(send.from, send.to);
    count_send(c, sent, send.from, send.to, send.bytes);
  }
  double slowest = 0;
  for (const auto& [rank, cost] : receiver) slowest = std::max(slowest, cost.first + cost.second);
  add_communication(c, phase.label, slowest, crosses, "p2p");
  if (phase.merge_states > 0) {
    add_compute(c, "merge (o, lse)", kernel_time_s(c.model.rates(0), phase.merge_states * c.plan.sizes.state_bytes));
  }
}

void fill_memory(Context& c) {
  const Workload& w = c.plan.workload;
  const PlanSizes& s = c.plan.sizes;
  long long largest = 0;
  for (const Shard& shard : c.plan.shards) largest = std::max(largest, shard.count);
  DecodeMemory& m = c.result.memory;
  m.kv_cache = w.layers * largest * s.kv_bytes_per_token;
  m.receive_buffers = c.plan.algorithm == DecodeAlgorithm::ring ? largest * s.kv_bytes_per_token : 0.0;
  m.partial_states = s.q_bytes + s.o_bytes + s.stats_bytes;  // q, o and lse (the ring's running state too)
  switch (c.plan.algorithm) {
    case DecodeAlgorithm::tree:
    case DecodeAlgorithm::tree_fused: m.workspace = s.stats_bytes; break;  // max, then the denominator
    case DecodeAlgorithm::tree_lse: m.workspace = s.state_bytes; break;    // one incoming state at a time
    case DecodeAlgorithm::allgather_merge: m.workspace = c.ranks() * s.state_bytes; break;
    case DecodeAlgorithm::ring: break;
  }
  m.weights = w.parameters * w.dtype_bytes;
  m.total = m.kv_cache + m.receive_buffers + m.partial_states + m.workspace + m.weights;
}

}  // namespace

DecodeResult DecodeModel::evaluate(const DecodePlan& plan) const {
  DecodeResult result;
  result.algorithm = plan.algorithm;
  result.seq_len = plan.seq_len;
  result.gpus = static_cast<int>(plan.gpus.size());
  result.domains = group_.domains;
  Context c{*this, plan, result};
  std::vector<double> sent(plan.gpus.size(), 0.0);
  for (const Phase& phase : plan.phases) {
    switch (phase.kind) {
      case PhaseKind::attend: evaluate_attend(c, phase); break;
      case PhaseKind::ring_pass: evaluate_ring(c, phase, sent); break;
      case PhaseKind::collective: evaluate_collective(c, phase, sent); break;
      case PhaseKind::transfers: evaluate_transfers(c, phase, sent); break;
      case PhaseKind::merge: add_compute(c, phase.label, kernel_time_s(rates(0), phase.merge_states * plan.sizes.state_bytes)); break;
      case PhaseKind::elementwise: add_compute(c, phase.label, kernel_time_s(rates(0), phase.bytes)); break;
    }
  }
  result.volume.per_gpu = *std::max_element(sent.begin(), sent.end());
  result.volume.total = result.volume.intra_node + result.volume.inter_node;
  result.latency_s = result.breakdown.compute_s + result.breakdown.intra_node_s + result.breakdown.inter_node_s;
  fill_memory(c);
  result.weights_s = plan.workload.parameters * plan.workload.dtype_bytes / rates(0).hbm_Bps;
  result.token_s = plan.workload.layers * result.latency_s + result.weights_s;
  return result;
}

}  // namespace treering::model
