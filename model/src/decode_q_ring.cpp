// pass-q's ring (PhaseKind::q_ring), timed rank by rank as the steps of append_round_steps run, not in lock
// step: a rank starts a round as soon as its own previous round and the query block it waits for are done.
// Lock step would be wrong here: with batch 1 only the owner's block exists, and rank i can attend it as soon
// as it has travelled i hops, while the owner is still attending; the time is (p-1) hops + one attention,
// not p attentions.
//
// Per rank: its clock; per ring edge, when its channel is free. A send (its step comes before the attention
// when the plan overlaps them, after it when not) starts when both the rank has reached it and the channel
// has finished the previous block, pays one latency per exchange, then the bytes at the band's rate; the
// next rank's receive ends at max(its clock, that arrival). Compute steps take what the simulator gives them
// (launch + max(bytes / HBM, FLOPs / peak); no kernel for an empty block).
// Example: batch 1 on 2 H100s of a DGX (NVLink p2p ~ 11.7 us + 4 KiB / 360 GB/s), 2 x 64,000 tokens of
// paper-mha16 (attention 198.6 us each): rank 0 attends 0-198.6 us and sends q at 0 (arrives 11.7 us); rank 1
// attends 11.7-210.3 us: the ring takes 210.3 us.
//
// Only the blocks that hold sequences move: with b sequences on p ranks, min(b, p) blocks, so a round touches
// the ranks that hold one (attend, send) and the ranks that receive one; a rank's other rounds only pay the
// host's time per ring step (ring_step_host_s), added when the rank is next touched. O(p x min(b, p)), not p^2
// (16,384 GPUs at batch 1: 32,768 rank-rounds).
#include <algorithm>

#include "decode_context.hpp"

namespace treering::model::detail {
namespace {

double compute_step_s(const Context& c, int rank, const Step& step) {
  if (step.fixed_s >= 0) return step.fixed_s;
  if (step.attention && step.flops == 0) return 0.0;
  const ComputeRates& rates = step.attention ? c.rates[static_cast<size_t>(rank)] : c.slowest;
  return step.kernels * rates.launch_s + std::max(step.bytes / rates.hbm_Bps, step.flops / rates.peak_flops);
}

struct RankClock {
  double now_s = 0;
  double channel_free_s = 0;  // its edge to rank + 1
  double compute_s = 0, host_s = 0, overlapped_s = 0;
};

// The ranks that hold a block with sequences in `round` (its owner + round) or receive one (the next rank), in order.
void touched_in_round(const std::vector<int>& owners, int p, int round, std::vector<int>& touched) {
  touched.clear();
  for (int owner : owners) {
    touched.push_back((owner + round) % p);
    if (round < p - 1) touched.push_back((owner + round + 1) % p);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
}

// The phase's time is its last rank's: its attention, host time and the rest waiting for blocks; the ranks that
// ended earlier start the next phase's sends that much earlier (Context::ready_offset_s).
void book_q_ring(Context& c, const Phase& phase, const std::vector<RankClock>& clocks,
                 const std::vector<char>& latency_bound) {
  const int p = c.ranks();
  const auto last = std::max_element(clocks.begin(), clocks.end(),
                                     [](const RankClock& a, const RankClock& b) { return a.now_s < b.now_s; });
  const int critical = static_cast<int>(last - clocks.begin());
  c.ready_offset_s.clear();
  for (const RankClock& clock : clocks) c.ready_offset_s.push_back(clock.now_s - last->now_s);
  add_compute(c, phase.label + " (attention)", last->compute_s);
  if (last->host_s > 0) add_host(c, phase.label + " (host round trips)", last->host_s);
  c.result.breakdown.overlapped_communication_s += last->overlapped_s;
  const double waited_s = last->now_s - last->compute_s - last->host_s;
  const int previous = (critical + p - 1) % p;
  if (waited_s > 0) {
    const bool network = p > 1 && c.model.crosses_domains(previous, critical);
    add_communication(c, phase.label + (network ? " (waiting for blocks, network)" : " (waiting for blocks, fabric)"),
                      waited_s, network, "p2p", latency_bound[static_cast<size_t>(critical)] != 0);
  }
}

}  // namespace

void evaluate_q_ring(Context& c, const Phase& phase) {
  const int p = c.ranks();
  std::vector<RankClock> clocks(static_cast<size_t>(p));
  std::vector<double> arrival_s(static_cast<size_t>(p), 0.0);  // of the block each rank receives this round
  std::vector<char> latency_bound(static_cast<size_t>(p), 0);  // the hop into each rank: latency >= transfer
  std::vector<int> rounds_paid(static_cast<size_t>(p), 0);     // rounds whose host time the rank's clock holds
  const double host_s = c.plan.costs.ring_step_host_s;
  auto pay_host_until = [&](int rank, int round) {  // the host steps of the rounds before `round` it sat out
    const int idle = round - rounds_paid[static_cast<size_t>(rank)];
    if (idle > 0 && host_s > 0) {
      clocks[static_cast<size_t>(rank)].now_s += idle * host_s;
      clocks[static_cast<size_t>(rank)].host_s += idle * host_s;
    }
    rounds_paid[static_cast<size_t>(rank)] = std::max(rounds_paid[static_cast<size_t>(rank)], round);
  };
  std::vector<int> owners;  // the ranks whose blocks hold sequences
  for (int owner = 0; owner < p; ++owner) {
    if (owned_sequences(c.plan.workload.batch, p, owner).count > 0) owners.push_back(owner);
  }
  std::vector<Step> steps;
  std::vector<int> touched, receivers;
  for (int round = 0; round < p; ++round) {
    touched_in_round(owners, p, round, touched);
    receivers.clear();
    for (int rank : touched) {  // everything before the receive, which ends each rank's round
      RankClock& clock = clocks[static_cast<size_t>(rank)];
      pay_host_until(rank, round);
      rounds_paid[static_cast<size_t>(rank)] = round + 1;
      steps.clear();
      append_round_steps(c.plan, rank, round, steps);
      double sent_s = -1, attention_s = 0;
      for (const Step& step : steps) {
        if (step.kind == StepKind::receive) {
          receivers.push_back(rank);
        } else if (step.kind == StepKind::send) {
          const double start_s = std::max(clock.now_s, clock.channel_free_s);
          const DecodeModel::PairCost& edge = c.model.p2p(rank, step.peer);
          sent_s = ring_transfer_s(c, rank, edge, step.bytes);
          latency_bound[static_cast<size_t>(step.peer)] =
              edge.at(step.bytes).latency_s >= step.bytes / edge.at(step.bytes).bandwidth_Bps;
          clock.channel_free_s = start_s + sent_s;
          arrival_s[static_cast<size_t>(step.peer)] = clock.channel_free_s;
          count_send(c, rank, step.peer, step.bytes);
          if (!step.overlaps_next) clock.now_s = std::max(clock.now_s, clock.channel_free_s);
        } else {
          const double duration_s = compute_step_s(c, rank, step);
          clock.now_s += duration_s;
          (step.fixed_s >= 0 ? clock.host_s : clock.compute_s) += duration_s;
          if (step.attention) attention_s = duration_s;
        }
      }
      if (sent_s > 0 && c.plan.ring_overlap) clock.overlapped_s += std::min(sent_s, attention_s);
    }
    for (int rank : receivers) {
      RankClock& clock = clocks[static_cast<size_t>(rank)];
      clock.now_s = std::max(clock.now_s, arrival_s[static_cast<size_t>(rank)]);
    }
  }
  for (int rank = 0; rank < p; ++rank) pay_host_until(rank, p);
  book_q_ring(c, phase, clocks, latency_bound);
}

}  // namespace treering::model::detail
