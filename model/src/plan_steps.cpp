// A plan as one rank's own steps (plan.hpp, steps_of).
#include <stdexcept>

#include "treering/model/compute.hpp"
#include "treering/model/plan.hpp"

namespace treering::model {
namespace {

// `fraction` of the batch's sequences (pass-q attends one owner's at a time): that share of every size.
Step attention_step(const DecodePlan& plan, const std::string& label, long long tokens, double extra_bytes,
                    double fraction = 1) {
  const PlanSizes& s = plan.sizes;
  const Workload& w = plan.workload;
  Step step;
  step.label = label;
  step.bytes = fraction * (static_cast<double>(tokens) * s.kv_bytes_per_token + s.q_bytes + s.o_bytes + s.stats_bytes) +
               extra_bytes;
  step.flops = fraction * attention_flops(w, tokens);
  step.attention = true;
  return step;
}

Step kernel_step(const std::string& label, double bytes, int kernels = 1) {
  Step step;
  step.label = label;
  step.bytes = bytes;
  step.kernels = kernels;
  return step;
}

Step host_step(const std::string& label, double time_s) {
  Step step;
  step.label = label;
  step.fixed_s = time_s;
  return step;
}

bool runs_extra(topologies::ExtraRanks ranks, int rank, int ranks_count) {
  if (ranks == topologies::ExtraRanks::last) return rank == ranks_count - 1;
  if (ranks == topologies::ExtraRanks::others) return rank != ranks_count - 1;
  return true;
}

}  // namespace

namespace {

// pass-q's round r: attend the query block of owner (rank - r) mod p to the local shard while sending it on.
void append_q_round_steps(const DecodePlan& plan, int rank, int round, std::vector<Step>& steps) {
  const int p = static_cast<int>(plan.gpus.size());
  const int batch = plan.workload.batch;
  auto sequences = [&](int r) { return owned_sequences(batch, p, ((rank - r) % p + p) % p).count; };
  const double q_per_sequence = plan.sizes.q_bytes / batch;
  const size_t first = steps.size();
  if (plan.costs.ring_step_host_s > 0)
    steps.push_back(host_step("host round trips of a ring step", plan.costs.ring_step_host_s));
  const long long held = sequences(round);
  const bool sends = round < p - 1 && held > 0;
  const Step send{StepKind::send,         "send query block", (rank + 1) % p, held * q_per_sequence, 0,
                  CollectiveOp::sendrecv, plan.ring_overlap};
  if (sends && plan.ring_overlap) steps.push_back(send);
  const long long tokens = held > 0 ? plan.shards[static_cast<size_t>(rank)].count : 0;
  steps.push_back(
      attention_step(plan, "attend a query block to the local shard", tokens, 0, static_cast<double>(held) / batch));
  if (sends && !plan.ring_overlap) steps.push_back(send);
  if (round < p - 1 && sequences(round + 1) > 0) {
    steps.push_back({StepKind::receive, "receive query block", (rank - 1 + p) % p,
                     sequences(round + 1) * q_per_sequence, 0, CollectiveOp::sendrecv, false});
  }
  for (size_t i = first; i < steps.size(); ++i) steps[i].round = round;
}

}  // namespace

bool has_phase(const DecodePlan& plan, PhaseRole role) {
  for (const Phase& phase : plan.phases) {
    if (phase.role == role) return true;
  }
  return false;
}

// Round r: attend to block (rank - r) mod p while sending it on (both start together), then receive the next.
void append_round_steps(const DecodePlan& plan, int rank, int round, std::vector<Step>& steps) {
  if (has_phase(plan, PhaseRole::q_ring)) return append_q_round_steps(plan, rank, round, steps);
  const int p = static_cast<int>(plan.gpus.size());
  auto block = [&](int r) { return plan.shards[static_cast<size_t>(((rank - r) % p + p) % p)].count; };
  const size_t first = steps.size();
  if (plan.costs.ring_step_host_s > 0)
    steps.push_back(host_step("host round trips of a ring step", plan.costs.ring_step_host_s));
  const long long tokens = block(round);
  const bool sends = round < p - 1 && tokens > 0;
  const Step send{StepKind::send,         "send K/V block", (rank + 1) % p, tokens * plan.sizes.kv_bytes_per_token, 0,
                  CollectiveOp::sendrecv, plan.ring_overlap};
  if (sends && plan.ring_overlap) steps.push_back(send);  // in flight during the attention
  steps.push_back(attention_step(plan, "attend to a K/V block and merge", tokens, 2 * plan.sizes.state_bytes));
  if (sends && !plan.ring_overlap) steps.push_back(send);  // after it, done before the rank goes on
  if (round < p - 1 && block(round + 1) > 0) {
    steps.push_back({StepKind::receive, "receive K/V block", (rank - 1 + p) % p,
                     block(round + 1) * plan.sizes.kv_bytes_per_token, 0, CollectiveOp::sendrecv, false});
  }
  for (size_t i = first; i < steps.size(); ++i) steps[i].round = round;
}

namespace {

// A transfers phase's steps: each rank's sends in the phase's order, then its receives, then (if it received
// any) its merge. `steps_for(rank)` says where a rank's steps go (null: a rank not asked for), so that one pass
// over the sends serves one rank or all of them.
template <typename StepsFor>
void transfer_steps(const DecodePlan& plan, size_t index, StepsFor steps_for) {
  const Phase& phase = plan.phases[index];
  auto step = [&](StepKind kind, int peer, double bytes) {
    Step s{kind, phase.label, peer, bytes, 0, CollectiveOp::sendrecv, false};
    s.phase = static_cast<int>(index);
    return s;
  };
  for (const Transfer& t : phase.sends) {
    if (std::vector<Step>* steps = steps_for(t.from)) steps->push_back(step(StepKind::send, t.to, t.bytes));
  }
  std::vector<int> receivers;  // in the order of their first receive
  for (const Transfer& t : phase.sends) {
    std::vector<Step>* steps = steps_for(t.to);
    if (!steps) continue;
    const bool first =
        steps->empty() || steps->back().kind != StepKind::receive || steps->back().phase != static_cast<int>(index);
    if (first) receivers.push_back(t.to);
    steps->push_back(step(StepKind::receive, t.from, t.bytes));
  }
  if (phase.merge_states <= 0) return;
  for (int rank : receivers) {
    Step merge = kernel_step("merge (o, lse)", phase.merge_states * phase.merge_fraction * plan.sizes.state_bytes);
    merge.phase = static_cast<int>(index);
    steps_for(rank)->push_back(merge);
  }
}

}  // namespace

void append_phase_steps(const DecodePlan& plan, int rank, size_t index, std::vector<Step>& steps) {
  if (rank < 0 || rank >= static_cast<int>(plan.gpus.size())) throw std::logic_error("no such rank");
  const Phase& phase = plan.phases.at(index);
  const size_t first = steps.size();
  switch (phase.kind) {
    case PhaseKind::attend:
      steps.push_back(attention_step(plan, phase.label, plan.shards[static_cast<size_t>(rank)].count, 0));
      break;
    case PhaseKind::ring_pass:
    case PhaseKind::q_ring:
      for (int round = 0; round < static_cast<int>(plan.gpus.size()); ++round)
        append_round_steps(plan, rank, round, steps);
      break;
    case PhaseKind::collective:
      steps.push_back({StepKind::collective, phase.label, -1, phase.bytes, 0, phase.op, false});
      break;
    case PhaseKind::transfers: transfer_steps(plan, index, [&](int r) { return r == rank ? &steps : nullptr; }); break;
    case PhaseKind::merge:
      steps.push_back(kernel_step(phase.label, phase.merge_states * plan.sizes.state_bytes));
      break;
    case PhaseKind::elementwise:
      if (runs_extra(phase.ranks, rank, static_cast<int>(plan.gpus.size()))) {
        steps.push_back(kernel_step(phase.label, phase.bytes, phase.kernels));
      }
      break;
    case PhaseKind::host: steps.push_back(host_step(phase.label, phase.time_s)); break;
  }
  for (size_t i = first; i < steps.size(); ++i) steps[i].phase = static_cast<int>(index);
}

std::vector<std::vector<Step>> transfers_phase_steps(const DecodePlan& plan, size_t phase) {
  if (plan.phases.at(phase).kind != PhaseKind::transfers) throw std::logic_error("not a transfers phase");
  std::vector<std::vector<Step>> steps(plan.gpus.size());
  transfer_steps(plan, phase, [&](int rank) {
    return rank >= 0 && rank < static_cast<int>(steps.size()) ? &steps[static_cast<size_t>(rank)] : nullptr;
  });
  return steps;
}

std::vector<Step> steps_of(const DecodePlan& plan, int rank) {
  std::vector<Step> steps;
  for (size_t index = 0; index < plan.phases.size(); ++index) append_phase_steps(plan, rank, index, steps);
  return steps;
}

}  // namespace treering::model
