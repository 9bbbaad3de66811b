#include "simulated_decode.hpp"

#include <algorithm>

namespace treering::cli {
namespace {

bool phase_crosses(const model::DecodeModel& decode, const model::DecodePlan& plan, const model::Phase& phase) {
  const int p = static_cast<int>(plan.gpus.size());
  switch (phase.kind) {
    case model::PhaseKind::collective: return decode.group().domains > 1;
    case model::PhaseKind::transfers:
      return std::any_of(phase.sends.begin(), phase.sends.end(),
                         [&](const model::Transfer& t) { return decode.crosses_domains(t.from, t.to); });
    case model::PhaseKind::ring_pass:
    case model::PhaseKind::q_ring:
      for (int rank = 0; rank < p; ++rank) {
        if (decode.crosses_domains(rank, (rank + 1) % p)) return true;
      }
      return false;
    default: return false;
  }
}

// The simulated latency with the model's volumes and memory (the same plan), and a breakdown from the rank that
// finished last: its compute; its waits for receives by where they came from (waiting on a peer of its own node
// that itself waited on the network counts as intra-node); its time in collectives, all inter-node when the
// GPUs span domains; overlapped = the time its own transfers moved bytes while it computed.
model::DecodeResult simulated_result(const model::DecodeModel& decode, const SimulatedCase& c) {
  model::DecodeResult r = c.predicted;
  const sim::RankTimes& t = c.simulated.critical;
  const bool across = decode.group().domains > 1;
  r.latency_s = c.simulated.latency_s;
  r.breakdown.compute_s = t.compute_s;
  r.breakdown.intra_node_s = t.wait_intra_s + (across ? 0.0 : t.collective_s);
  r.breakdown.inter_node_s = t.wait_inter_s + (across ? t.collective_s : 0.0);
  r.breakdown.overlapped_communication_s = t.overlapped_s;
  r.token_s = c.plan.workload.layers * r.latency_s + r.weights_s;
  r.phases.clear();
  for (size_t i = 0; i < c.plan.phases.size(); ++i) {
    const model::Phase& phase = c.plan.phases[i];
    r.phases.push_back({phase.label, t.phase_s.at(i), phase_crosses(decode, c.plan, phase), "simulated"});
  }
  return r;
}

}  // namespace

SimulatedCase simulate_decode(const model::DecodeModel& decode, const model::Workload& workload, model::DecodeAlgorithm algorithm,
                              long long seq_len, const sim::ReplayOptions& options, bool check_memory,
                              const model::PlanOptions& plan_options) {
  SimulatedCase c;
  c.plan = decode.plan(algorithm, workload, seq_len, plan_options);
  c.predicted = decode.evaluate(c.plan);
  if (check_memory) model::check_fits(c.predicted, decode);
  c.simulated = sim::replay_plan(decode, c.plan, options);
  c.row.result = simulated_result(decode, c);
  c.row.engine = "sim";
  set_context(c.row, decode, c.plan);
  c.row.model_latency_s = c.predicted.latency_s;
  c.row.transfers_simulated = c.simulated.transfers_simulated;
  return c;
}

}  // namespace treering::cli
