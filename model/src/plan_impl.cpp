// A plan as an implementation runs it (plan.hpp, apply_impl).
#include <algorithm>

#include "treering/model/plan.hpp"

namespace treering::model {
namespace {

using topologies::ExtraRanks;
using topologies::ExtraWork;
using topologies::ImplProfile;

bool applies(const ExtraWork& work, DecodeAlgorithm algorithm) {
  if (work.algorithms.empty()) return true;
  bool applies = false;
  for (const std::string& name : work.algorithms) {
    DecodeAlgorithm listed{};
    try {
      listed = parse_decode_algorithm(name);
    } catch (const std::invalid_argument& error) {
      throw topologies::InputError(work.location, error.what());
    }
    applies = applies || listed == algorithm;
  }
  return applies;
}

bool runs_on(ExtraRanks ranks, int rank, int ranks_count) {
  switch (ranks) {
    case ExtraRanks::all: return true;
    case ExtraRanks::last: return rank == ranks_count - 1;
    case ExtraRanks::others: return rank != ranks_count - 1;
  }
  return true;
}

// The largest shard among the ranks that run the entry (the one the others wait for).
long long largest_shard(const DecodePlan& plan, ExtraRanks ranks) {
  const int p = static_cast<int>(plan.shards.size());
  long long largest = 0;
  for (int rank = 0; rank < p; ++rank) {
    if (runs_on(ranks, rank, p)) largest = std::max(largest, plan.shards[static_cast<size_t>(rank)].count);
  }
  return largest;
}

Phase host_phase(const std::string& label, double time_s) {
  return {.kind = PhaseKind::host, .role = PhaseRole::implementation, .label = label, .time_s = time_s};
}

void add_extra(std::vector<Phase>& phases, const DecodePlan& plan, const ExtraWork& work, const ImplProfile& profile) {
  const PlanSizes& s = plan.sizes;
  if (!work.collective.empty()) {
    const double bytes = work.collective_bytes == "q"       ? s.q_bytes
                         : work.collective_bytes == "o"     ? s.o_bytes
                         : work.collective_bytes == "stats" ? s.stats_bytes
                                                            : work.bytes;
    const CollectiveOp op = work.collective == "broadcast" ? CollectiveOp::broadcast : CollectiveOp::allreduce;
    const int element_bytes = work.collective_bytes == "stats"
                                  ? static_cast<int>(s.stats_bytes / (plan.workload.batch * plan.workload.query_heads))
                                  : plan.workload.dtype_bytes;
    if (plan.gpus.size() > 1) {
      phases.push_back({.kind = PhaseKind::collective,
                        .role = PhaseRole::implementation,
                        .label = work.what,
                        .op = op,
                        .bytes = bytes,
                        .element_bytes = element_bytes});
    }
  } else {
    const double shard_tokens = static_cast<double>(largest_shard(plan, work.ranks));
    const double cached_per_token = s.kv_bytes_per_token / plan.costs.kv_expansion;
    phases.push_back({.kind = PhaseKind::elementwise,
                      .role = PhaseRole::implementation,
                      .label = work.what,
                      .bytes = work.kv_bytes * shard_tokens * cached_per_token +
                               work.expanded_kv_bytes * shard_tokens * s.kv_bytes_per_token + work.bytes,
                      .kernels = work.kernels,
                      .ranks = work.ranks});
  }
  if (work.host_round_trips > 0) {
    phases.push_back(host_phase(work.what + ": host round trip", work.host_round_trips * profile.host_round_trip_s));
  }
}

}  // namespace

const ImplProfile& ImplCosts::profile_or_default() const {
  return profile ? *profile : topologies::default_impl_profile();
}

void apply_impl(DecodePlan& plan, std::shared_ptr<const ImplProfile> shared) {
  const ImplProfile& profile = *shared;
  plan.costs.profile = std::move(shared);
  if (profile.kv_expansion && plan.costs.kv_expansion == 1.0) {
    plan.costs.kv_expansion = static_cast<double>(plan.workload.query_heads) / plan.workload.kv_heads;
    plan.sizes.kv_bytes_per_token *= plan.costs.kv_expansion;
  }
  plan.costs.kernel_launch_s = profile.kernel_launch_s;
  plan.costs.collective_call_s = profile.collective_call_s;
  plan.ring_overlap = plan.ring_overlap && profile.ring_overlap;
  plan.costs.ring_exchanges_per_step = profile.ring_exchanges_per_step;
  plan.costs.ring_step_host_s = profile.ring_host_round_trips_per_step * profile.host_round_trip_s;
  plan.costs.other_kernels_per_layer = profile.other_kernels_per_layer;
  plan.costs.eager_dispatch_s = profile.eager_dispatch_s;
  std::vector<Phase> phases;
  if (profile.first_call_s > 0) {
    phases.push_back(host_phase("first call: tracing and compilation", profile.first_call_s));
    phases.back().once_per_call = true;
  }
  for (const ExtraWork& work : profile.per_layer) {
    if (applies(work, plan.algorithm)) add_extra(phases, plan, work, profile);
  }
  phases.insert(phases.end(), plan.phases.begin(), plan.phases.end());
  plan.phases = std::move(phases);
}

int kernels_per_layer(const DecodePlan& plan) {
  const int rounds = static_cast<int>(plan.gpus.size());
  int kernels = plan.costs.other_kernels_per_layer;
  for (const Phase& phase : plan.phases) {
    switch (phase.kind) {
      case PhaseKind::attend:
      case PhaseKind::collective:
      case PhaseKind::merge: kernels += 1; break;
      case PhaseKind::ring_pass:
      case PhaseKind::q_ring: kernels += 2 * rounds + (rounds - 1); break;
      case PhaseKind::transfers: kernels += phase.merge_states > 0 ? 2 : 1; break;
      case PhaseKind::elementwise: kernels += phase.kernels; break;
      case PhaseKind::host: break;
    }
  }
  return kernels;
}

}  // namespace treering::model
