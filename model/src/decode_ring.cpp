// The ring pass. In round r (0 .. p-2) rank i attends to the block it holds, (i - r) mod p, merging it into
// its running state, while sending that block to rank i + 1; after p - 1 rounds it attends to the last block
// it received. A round lasts as long as its slowest rank: max over ranks of max(attention, transfer).
// Without overlap (PlanOptions::ring_overlap false) a round takes the slowest attention plus the slowest
// transfer: exact when the blocks are equal, and at most one token's attention and transfer more otherwise.
// The paper's code rotates p times (its eq. 10 counts p transfers); the p-th rotation only returns every
// block to its owner and is left out.
//
// Blocks have two sizes: N mod p of them hold floor(N/p) + 1 tokens, the others floor(N/p). In round r the
// big blocks sit on ranks r .. r + (N mod p) - 1 (mod p), a window that slides by one rank per round, so the
// maxima over ranks come from sliding-window maxima: O(p) per pass, not O(p^2).
#include <algorithm>
#include <deque>

#include "decode_context.hpp"

namespace treering::model::detail {
namespace {

struct WindowMax {
  double value = 0;
  int rank = -1;
};

// For each of `count` windows [start + w, start + w + length) (ranks mod p), the largest value and its rank.
std::vector<WindowMax> sliding_max(const std::vector<double>& values, int start, int length, int count) {
  const int p = static_cast<int>(values.size());
  std::vector<WindowMax> maxima(static_cast<size_t>(count));
  if (length <= 0) return maxima;
  std::deque<int> candidates;  // positions (unwrapped) with decreasing values
  auto value_at = [&](int position) { return values[static_cast<size_t>(position % p)]; };
  int next = start;
  for (int w = 0; w < count; ++w) {
    const int first = start + w;
    for (; next < first + length; ++next) {
      while (!candidates.empty() && value_at(candidates.back()) <= value_at(next)) candidates.pop_back();
      candidates.push_back(next);
    }
    while (candidates.front() < first) candidates.pop_front();
    maxima[static_cast<size_t>(w)] = {value_at(candidates.front()), candidates.front() % p};
  }
  return maxima;
}

WindowMax larger(const WindowMax& a, const WindowMax& b) { return b.value > a.value ? b : a; }

}  // namespace

namespace {

bool equal_split(const DecodePlan& plan) {
  const std::vector<Shard> equal = split_tokens(plan.seq_len, static_cast<int>(plan.gpus.size()));
  for (size_t i = 0; i < equal.size(); ++i) {
    if (equal[i].count != plan.shards[i].count) return false;
  }
  return true;
}

// Any split (split_by_speed's, given counts): every round's maxima over all ranks, O(p^2).
void evaluate_ring_any_split(Context& c, const Phase& phase) {
  const int p = c.ranks();
  const double kv = c.plan.sizes.kv_bytes_per_token;
  const double merge_bytes = 2 * c.plan.sizes.state_bytes;
  auto block = [&](int rank, int round) {
    return c.plan.shards[static_cast<size_t>(((rank - round) % p + p) % p)].count;
  };
  double compute_s = 0, exposed_fabric_s = 0, exposed_network_s = 0, overlapped_s = 0;
  for (int round = 0; round < p - 1; ++round) {
    double attention = 0, transfer = 0;
    int sender = -1;
    for (int rank = 0; rank < p; ++rank) {
      attention = std::max(attention, attention_time_s(c.rates[static_cast<size_t>(rank)], c.plan.workload,
                                                       c.plan.sizes, block(rank, round), merge_bytes));
      const double t =
          ring_transfer_s(c, rank, c.model.p2p(rank, (rank + 1) % p), static_cast<double>(block(rank, round)) * kv);
      if (t > transfer) transfer = t, sender = rank;
    }
    compute_s += attention;
    overlapped_s += c.plan.ring_overlap ? std::min(transfer, attention) : 0.0;
    const double exposed = c.plan.ring_overlap ? std::max(0.0, transfer - attention) : transfer;
    (sender >= 0 && c.model.crosses_domains(sender, (sender + 1) % p) ? exposed_network_s : exposed_fabric_s) +=
        exposed;
  }
  double last = 0;
  for (int rank = 0; rank < p; ++rank) {
    last = std::max(last, attention_time_s(c.rates[static_cast<size_t>(rank)], c.plan.workload, c.plan.sizes,
                                           block(rank, p - 1), merge_bytes));
    if (p > 1) count_send(c, rank, (rank + 1) % p, static_cast<double>(c.plan.seq_len - block(rank + 1, 0)) * kv);
  }
  finish_ring(c, phase, compute_s + last, overlapped_s, exposed_network_s, exposed_fabric_s);
}

}  // namespace

double ring_transfer_s(const Context& c, int rank, const DecodeModel::PairCost& edge, double bytes) {
  if (!(bytes > 0)) return 0.0;
  double time_s = edge.time_s(bytes);
  const double share_Bps = c.edge_share_Bps(rank);
  if (share_Bps > 0) time_s = std::max(time_s, edge.at(bytes).latency_s + bytes * edge.size_factor(bytes) / share_Bps);
  return time_s + (c.plan.costs.ring_exchanges_per_step - 1) * edge.at(bytes).latency_s;
}

void finish_ring(Context& c, const Phase& phase, double compute_s, double overlapped_s, double exposed_network_s,
                 double exposed_fabric_s) {
  add_compute(c, phase.label + " (attention and merges)", compute_s);
  c.result.breakdown.overlapped_communication_s += overlapped_s;
  if (exposed_network_s > 0)
    add_communication(c, phase.label + " (transfers not hidden, network)", exposed_network_s, true, "p2p");
  if (exposed_fabric_s > 0)
    add_communication(c, phase.label + " (transfers not hidden, fabric)", exposed_fabric_s, false, "p2p");
  if (c.plan.costs.ring_step_host_s > 0)
    add_host(c, phase.label + " (host round trips)", c.ranks() * c.plan.costs.ring_step_host_s);
}

void evaluate_ring(Context& c, const Phase& phase) {
  if (!equal_split(c.plan)) return evaluate_ring_any_split(c, phase);
  const int p = c.ranks();
  const long long base = c.plan.seq_len / p;
  const int big = static_cast<int>(c.plan.seq_len % p);  // blocks 0 .. big-1 hold base + 1 tokens
  const double kv = c.plan.sizes.kv_bytes_per_token;
  const double merge_bytes = 2 * c.plan.sizes.state_bytes;  // the fused merge reads and writes the running state
  std::vector<double> compute_big(p), compute_small(p), transfer_big(p), transfer_small(p);
  for (int rank = 0; rank < p; ++rank) {
    const auto& rates = c.rates[static_cast<size_t>(rank)];
    compute_big[rank] = attention_time_s(rates, c.plan.workload, c.plan.sizes, base + 1, merge_bytes);
    compute_small[rank] = attention_time_s(rates, c.plan.workload, c.plan.sizes, base, merge_bytes);
    if (p > 1) {
      const auto& edge = c.model.p2p(rank, (rank + 1) % p);
      transfer_big[rank] = ring_transfer_s(c, rank, edge, (base + 1) * kv);
      transfer_small[rank] = ring_transfer_s(c, rank, edge, base * kv);
    }
  }
  const int rounds = p - 1;
  const auto compute_in_big = sliding_max(compute_big, 0, big, rounds);
  const auto compute_in_small = sliding_max(compute_small, big, p - big, rounds);
  const auto transfer_in_big = sliding_max(transfer_big, 0, big, rounds);
  const auto transfer_in_small = sliding_max(transfer_small, big, p - big, rounds);
  double compute_s = 0, exposed_fabric_s = 0, exposed_network_s = 0, overlapped_s = 0;
  for (int round = 0; round < rounds; ++round) {
    const double attention = larger(compute_in_big[round], compute_in_small[round]).value;
    const WindowMax transfer = larger(transfer_in_big[round], transfer_in_small[round]);
    compute_s += attention;
    overlapped_s += c.plan.ring_overlap ? std::min(transfer.value, attention) : 0.0;
    const double exposed = c.plan.ring_overlap ? std::max(0.0, transfer.value - attention) : transfer.value;
    (transfer.rank >= 0 && c.model.crosses_domains(transfer.rank, (transfer.rank + 1) % p) ? exposed_network_s
                                                                                           : exposed_fabric_s) +=
        exposed;
  }
  double last = 0;  // rank i ends with block (i + 1) mod p
  for (int rank = 0; rank < p; ++rank)
    last = std::max(last, ((rank + 1) % p < big ? compute_big : compute_small)[rank]);
  for (int rank = 0; rank < p && p > 1; ++rank) {
    // Rank i forwards every block but the one its successor owns: N - shard(i + 1) tokens.
    count_send(c, rank, (rank + 1) % p,
               (c.plan.seq_len - c.plan.shards[static_cast<size_t>((rank + 1) % p)].count) * kv);
  }
  finish_ring(c, phase, compute_s + last, overlapped_s, exposed_network_s, exposed_fabric_s);
}

}  // namespace treering::model::detail
