#include "plan_traffic.hpp"

namespace treering::sim {

std::map<std::pair<int, int>, double> point_to_point_bytes(const model::DecodePlan& plan) {
  std::map<std::pair<int, int>, double> bytes;
  const int p = static_cast<int>(plan.gpus.size());
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind == model::PhaseKind::transfers) {
      for (const model::Transfer& t : phase.sends) {
        if (t.bytes > 0) bytes[{t.from, t.to}] += t.bytes;
      }
    }
    if (phase.kind == model::PhaseKind::q_ring && p > 1) {  // every owner's block but the successor's
      const int batch = plan.workload.batch;
      for (int rank = 0; rank < p; ++rank) {
        const long long forwarded = batch - model::owned_sequences(batch, p, (rank + 1) % p).count;
        if (forwarded > 0) bytes[{rank, (rank + 1) % p}] += static_cast<double>(forwarded) * plan.sizes.q_bytes / batch;
      }
    }
    if (phase.kind != model::PhaseKind::ring_pass || p < 2) continue;
    long long tokens = 0;
    for (const model::Shard& shard : plan.shards) tokens += shard.count;
    for (int rank = 0; rank < p; ++rank) {
      const long long forwarded = tokens - plan.shards[static_cast<size_t>((rank + 1) % p)].count;
      if (forwarded > 0)
        bytes[{rank, (rank + 1) % p}] += static_cast<double>(forwarded) * plan.sizes.kv_bytes_per_token;
    }
  }
  return bytes;
}

}  // namespace treering::sim
