#include "treering/model/extrapolation.hpp"

#include <algorithm>
#include <limits>

#include "treering/model/attention_kernel.hpp"
#include "treering/model/compute.hpp"
#include "treering/topologies/units.hpp"

namespace treering::model {
namespace {

namespace topo = treering::topologies;

// The smallest and largest of what a plan uses of one kind; empty while nothing was seen.
struct Span {
  double low = std::numeric_limits<double>::infinity();
  double high = 0;
  bool seen() const { return high > 0 || low == 0; }
  void add(double value) { low = std::min(low, value), high = std::max(high, value); }
};

struct PlanUse {
  Span tokens;    // per attention kernel
  Span sends[2];  // bytes per send, inside a domain [0] and across domains [1]
  Span collective_bytes;
  int collective_ranks = 0;
};

PlanUse use_of(const topo::Topology& topology, const DecodePlan& plan) {
  PlanUse use;
  const int p = static_cast<int>(plan.gpus.size());
  auto crosses = [&](int a, int b) {
    return topology.domain_of_gpu(plan.gpus[static_cast<size_t>(a)]) !=
           topology.domain_of_gpu(plan.gpus[static_cast<size_t>(b)]);
  };
  for (const Phase& phase : plan.phases) {
    switch (phase.kind) {
      case PhaseKind::attend:
        for (const Shard& shard : plan.shards)
          if (shard.count > 0) use.tokens.add(static_cast<double>(shard.count));
        break;
      case PhaseKind::ring_pass: {  // every block visits every rank, and every edge of the ring carries it
        Span blocks;
        for (const Shard& shard : plan.shards)
          if (shard.count > 0) blocks.add(static_cast<double>(shard.count));
        if (!blocks.seen()) break;
        use.tokens.add(blocks.low), use.tokens.add(blocks.high);
        for (int rank = 0; rank < p && p > 1; ++rank) {
          Span& sends = use.sends[crosses(rank, (rank + 1) % p) ? 1 : 0];
          sends.add(blocks.low * plan.sizes.kv_bytes_per_token), sends.add(blocks.high * plan.sizes.kv_bytes_per_token);
        }
        break;
      }
      case PhaseKind::q_ring: {  // each rank attends its shard; the query blocks cross every edge of the ring
        for (const Shard& shard : plan.shards)
          if (shard.count > 0) use.tokens.add(static_cast<double>(shard.count));
        const double block_bytes =
            plan.sizes.q_bytes * owned_sequences(plan.workload.batch, p, 0).count / plan.workload.batch;
        for (int rank = 0; rank < p && p > 1; ++rank) use.sends[crosses(rank, (rank + 1) % p) ? 1 : 0].add(block_bytes);
        break;
      }
      case PhaseKind::transfers:
        for (const Transfer& send : phase.sends) use.sends[crosses(send.from, send.to) ? 1 : 0].add(send.bytes);
        break;
      case PhaseKind::collective:
        if (p > 1) use.collective_bytes.add(phase.bytes), use.collective_ranks = p;
        break;
      case PhaseKind::merge:
      case PhaseKind::elementwise:
      case PhaseKind::host: break;
    }
  }
  return use;
}

// "sends inside a domain of up to 32.8 MB, outside the measured 8 B-16.8 MB" (or "down to", "from 4 B to 1 GB").
std::string outside(const std::string& what, const Span& used, double low, double high, bool tokens) {
  auto show = [&](double v) {
    return tokens ? topo::format_token_count(static_cast<long long>(v)) : topo::format_bytes(v);
  };
  const bool below = used.low<low, above = used.high> high;
  if (!below && !above) return "";
  const std::string span = below && above ? "from " + show(used.low) + " to " + show(used.high)
                           : below        ? "down to " + show(used.low)
                                          : "up to " + show(used.high);
  return what + " " + span + (tokens ? " tokens" : "") + ", outside the measured " + show(low) + "-" + show(high) +
         (tokens ? " tokens" : "");
}

void add(std::vector<std::string>& reasons, const std::string& reason) {
  if (!reason.empty()) reasons.push_back(reason);
}

// Where the calibration measured attention by kernel shape but not this workload's: its kernel keeps the one HBM
// efficiency's line. Example: shapes of head dim 128 measured, llama3.2-1b (64, group 4) -> "attention of head dim
// 64, group 4 not measured by shape (the HBM efficiency's line)".
std::string unmeasured_shape(const topo::Calibration& calibration, const Workload& workload) {
  if (calibration.attention_shapes.empty() || find_attention_shape(calibration.attention_shapes, workload)) return "";
  return "attention of head dim " + std::to_string(workload.head_dim) + ", group " +
         std::to_string(split_kv_shape(workload).group) + " not measured by shape (the HBM efficiency's line)";
}

}  // namespace

ExtrapolationParts extrapolation_parts(const topo::Topology& topology, const DecodePlan& plan) {
  ExtrapolationParts parts;
  const auto& calibration = topology.spec().calibration;
  if (!calibration) return parts;
  const topo::CalibrationProvenance& p = calibration->provenance;
  const PlanUse use = use_of(topology, plan);
  if (use.tokens.seen()) {
    if (!calibration->hbm_efficiency && !calibration->launch_overhead_s)
      add(parts.compute, "attention not calibrated (default HBM efficiency)");
    else if (p.tokens)
      add(parts.compute, outside("attention over", use.tokens, static_cast<double>(p.tokens->first),
                                 static_cast<double>(p.tokens->second), true));
    add(parts.compute, unmeasured_shape(*calibration, plan.workload));
  }
  for (int tier = 0; tier < 2; ++tier) {
    if (!use.sends[tier].seen()) continue;
    const auto& bands = tier == 0 ? calibration->p2p_scale_up : calibration->p2p_scale_out;
    const std::string what = tier == 0 ? "sends inside a domain" : "sends across domains";
    if (bands.empty())
      add(parts.communication, what + " not measured (priced from the collectives' fit)");
    else if (p.p2p_sizes_bytes)
      add(parts.communication,
          outside(what + " of", use.sends[tier], p.p2p_sizes_bytes->first, p.p2p_sizes_bytes->second, false));
  }
  if (use.collective_bytes.seen()) {
    parts.collective_bytes = std::pair{use.collective_bytes.low, use.collective_bytes.high};
    for (const std::string& reason : collective_extrapolations(topology, use.collective_bytes.low,
                                                               use.collective_bytes.high, use.collective_ranks)) {
      add(parts.communication, reason);
    }
  }
  return parts;
}

std::vector<std::string> extrapolations(const topo::Topology& topology, const DecodePlan& plan) {
  ExtrapolationParts parts = extrapolation_parts(topology, plan);
  parts.compute.insert(parts.compute.end(), parts.communication.begin(), parts.communication.end());
  return parts.compute;
}

std::vector<std::string> collective_extrapolations(const topo::Topology& topology, double low_bytes, double high_bytes,
                                                   int ranks) {
  std::vector<std::string> reasons;
  const auto& calibration = topology.spec().calibration;
  if (!calibration) return reasons;
  const topo::CalibrationProvenance& p = calibration->provenance;
  Span bytes;
  bytes.add(low_bytes), bytes.add(high_bytes);
  if (!p.sizes_bytes)
    add(reasons, "collectives not measured");
  else
    add(reasons, outside("collectives of", bytes, p.sizes_bytes->first, p.sizes_bytes->second, false));
  if (p.ranks && (ranks < p.ranks->first || ranks > p.ranks->second)) {
    add(reasons, "collectives over " + std::to_string(ranks) + " ranks outside the measured " +
                     std::to_string(p.ranks->first) + "-" + std::to_string(p.ranks->second));
  }
  return reasons;
}

void add_measures(const DecodePlan& plan, PlanMeasures& measures) {
  const bool ring = std::any_of(plan.phases.begin(), plan.phases.end(),
                                [](const Phase& ph) { return ph.kind == PhaseKind::ring_pass; });
  for (const Shard& shard : plan.shards) {
    if (shard.count == 0) continue;
    measures.tokens.insert(shard.count);
    if (ring && plan.gpus.size() > 1)
      measures.send_bytes.insert(static_cast<double>(shard.count) * plan.sizes.kv_bytes_per_token);
  }
  for (const Phase& phase : plan.phases) {
    if (phase.kind == PhaseKind::transfers) {
      for (const Transfer& send : phase.sends) measures.send_bytes.insert(send.bytes);
    } else if (phase.kind == PhaseKind::q_ring && plan.gpus.size() > 1) {
      const int p = static_cast<int>(plan.gpus.size());
      for (int owner = 0; owner < p; ++owner) {
        const long long sequences = owned_sequences(plan.workload.batch, p, owner).count;
        if (sequences > 0) measures.send_bytes.insert(plan.sizes.q_bytes * sequences / plan.workload.batch);
      }
    } else if (phase.kind == PhaseKind::collective && plan.gpus.size() > 1) {
      measures.collective_bytes[phase.op].insert(phase.bytes);
    }
  }
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const std::string& reason : reasons) out += (out.empty() ? "" : "; ") + reason;
  return out;
}

}  // namespace treering::model
