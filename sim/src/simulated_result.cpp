#include "treering/sim/simulated_result.hpp"

#include <algorithm>

namespace treering::sim {
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

}  // namespace

model::DecodeResult simulated_result(const model::DecodeModel& decode, const model::DecodePlan& plan,
                                     const model::DecodeResult& predicted, const ReplayResult& replay) {
  model::DecodeResult r = predicted;
  const StageOutcome& attention = replay.stages.front();
  const RankTimes& t = attention.critical;
  const bool across = decode.group().domains > 1;
  r.latency_s = *std::max_element(attention.finish_s.begin(), attention.finish_s.end());
  r.breakdown.compute_s = t.compute_s;
  r.breakdown.intra_node_s = t.wait_intra_s + (across ? 0.0 : t.collective_s);
  r.breakdown.inter_node_s = t.wait_inter_s + (across ? t.collective_s : 0.0);
  r.breakdown.overlapped_communication_s = t.overlapped_s;
  r.token_s = model::token_time_s(plan, r);
  r.phases.clear();
  for (size_t i = 0; i < plan.phases.size(); ++i) {
    const model::Phase& phase = plan.phases[i];
    r.phases.push_back({phase.label, t.phase_s.at(i), phase_crosses(decode, plan, phase), "simulated"});
  }
  return r;
}

}  // namespace treering::sim
