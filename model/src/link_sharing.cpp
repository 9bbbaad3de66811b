// Links several groups cross at once (link_sharing.hpp).
#include "treering/model/link_sharing.hpp"

#include <algorithm>
#include <unordered_map>

namespace treering::model {
namespace {

bool ring_phase(PhaseKind kind) { return kind == PhaseKind::ring_pass || kind == PhaseKind::q_ring; }

struct LinkUse {
  double bytes = 0;
  int flows = 0;
  int group = -1;       // the first group that crossed it
  bool shared = false;  // and another one did too
};

// One phase, every group: the links' loads, then each group's bound and edge shares from them.
void share_phase(const std::vector<const DecodeModel*>& models, const std::vector<DecodePlan>& plans, size_t phase,
                 const std::vector<double>& rate_Bps, std::vector<GroupSharing>& out) {
  const topologies::Topology& topology = models.front()->topology();
  std::unordered_map<topologies::LinkId, LinkUse> uses;
  std::vector<std::vector<std::vector<topologies::LinkId>>> routes(plans.size());
  std::vector<std::vector<PhaseFlow>> flows(plans.size());
  for (size_t g = 0; g < plans.size(); ++g) {
    flows[g] = phase_flows(*models[g], plans[g], phase);
    for (const PhaseFlow& flow : flows[g]) {
      routes[g].push_back(
          topology.route(plans[g].gpus[static_cast<size_t>(flow.from)], plans[g].gpus[static_cast<size_t>(flow.to)])
              .links);
      for (topologies::LinkId id : routes[g].back()) {
        LinkUse& use = uses[id];
        use.bytes += flow.bytes;
        ++use.flows;
        if (use.group < 0) use.group = static_cast<int>(g);
        use.shared = use.shared || use.group != static_cast<int>(g);
      }
    }
  }
  const bool ring = ring_phase(plans.front().phases[phase].kind);
  for (size_t g = 0; g < plans.size(); ++g) {
    GroupSharing& sharing = out[g];
    if (ring) sharing.edge_share_Bps[phase].assign(plans[g].gpus.size(), 0.0);
    for (size_t f = 0; f < flows[g].size(); ++f) {
      for (topologies::LinkId id : routes[g][f]) {
        const LinkUse& use = uses.at(id);
        if (!use.shared) continue;
        sharing.shares = true;
        const double rate = rate_Bps[static_cast<size_t>(id)];
        if (use.bytes / rate > sharing.bound_s[phase]) {
          sharing.bound_s[phase] = use.bytes / rate;
          sharing.bound_scale_out[phase] = topology.link(id).tier == topologies::Tier::scale_out;
        }
        if (ring) {
          double& share = sharing.edge_share_Bps[phase][static_cast<size_t>(flows[g][f].from)];
          share = share > 0 ? std::min(share, rate / use.flows) : rate / use.flows;
        }
      }
    }
  }
}

}  // namespace

std::vector<PhaseFlow> phase_flows(const DecodeModel& model, const DecodePlan& plan, size_t index) {
  const Phase& phase = plan.phases.at(index);
  const int p = static_cast<int>(plan.gpus.size());
  std::vector<PhaseFlow> flows;
  switch (phase.kind) {
    case PhaseKind::ring_pass:
    case PhaseKind::q_ring: {
      long long largest = 0;
      for (const Shard& shard : plan.shards) largest = std::max(largest, shard.count);
      const double bytes =
          phase.kind == PhaseKind::ring_pass ? largest * plan.sizes.kv_bytes_per_token : plan.sizes.q_bytes;
      for (int rank = 0; rank < p && p > 1; ++rank) flows.push_back({rank, (rank + 1) % p, bytes});
      break;
    }
    case PhaseKind::collective:
      for (const CollectiveFlow& flow : model.collective_schedule(phase).flows)
        flows.push_back({flow.from, flow.to, flow.wire_bytes});
      break;
    case PhaseKind::transfers:
      for (const Transfer& send : phase.sends) flows.push_back({send.from, send.to, send.bytes});
      break;
    default: break;
  }
  return flows;
}

double concurrent_collective_s(const topologies::Topology& topology, const std::vector<std::vector<int>>& groups,
                               CollectiveOp op, double bytes) {
  std::vector<CollectiveSchedule> schedules;
  std::vector<CollectiveCandidate> chosen;
  for (const std::vector<int>& gpus : groups) {
    if (gpus.size() < 2 || !(bytes > 0)) return 0.0;
    const CommGroup group = describe_group(topology, gpus);
    CollectiveRequest request;
    request.op = op;
    request.bytes = bytes;
    chosen.push_back(estimate_collective(group, request).chosen);
    if (groups.size() < 2) return chosen.back().time_s;
    std::vector<int> domains;
    for (int gpu : gpus) domains.push_back(topology.domain_of_gpu(gpu));
    schedules.push_back(collective_schedule(group, domains, op, bytes, chosen.back()));
  }
  const LinkEfficiency efficiency = link_efficiency(topology);
  std::unordered_map<topologies::LinkId, LinkUse> uses;
  std::vector<std::vector<std::vector<topologies::LinkId>>> routes(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const CollectiveFlow& flow : schedules[g].flows) {
      routes[g].push_back(
          topology.route(groups[g][static_cast<size_t>(flow.from)], groups[g][static_cast<size_t>(flow.to)]).links);
      for (topologies::LinkId id : routes[g].back()) {
        LinkUse& use = uses[id];
        use.bytes += flow.wire_bytes;
        if (use.group < 0) use.group = static_cast<int>(g);
        use.shared = use.shared || use.group != static_cast<int>(g);
      }
    }
  }
  double slowest_s = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    double bound_s = 0;
    for (const std::vector<topologies::LinkId>& route : routes[g]) {
      for (topologies::LinkId id : route) {
        const LinkUse& use = uses.at(id);
        if (use.shared)
          bound_s = std::max(bound_s, use.bytes / (topology.link(id).bandwidth_Bps * efficiency.of(topology.link(id))));
      }
    }
    slowest_s = std::max(slowest_s, chosen[g].latency_s + std::max(chosen[g].transfer_s, bound_s));
  }
  return slowest_s;
}

std::vector<GroupSharing> layout_sharing(const std::vector<const DecodeModel*>& models,
                                         const std::vector<DecodePlan>& plans) {
  std::vector<GroupSharing> out(plans.size());
  if (plans.size() < 2) return out;
  const topologies::Topology& topology = models.front()->topology();
  const LinkEfficiency efficiency = link_efficiency(topology);
  std::vector<double> rate_Bps(static_cast<size_t>(topology.link_count()));
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
    rate_Bps[static_cast<size_t>(id)] = topology.link(id).bandwidth_Bps * efficiency.of(topology.link(id));
  }
  const size_t phases = plans.front().phases.size();
  for (const DecodePlan& plan : plans) {
    if (plan.phases.size() != phases) return out;
    for (size_t phase = 0; phase < phases; ++phase) {
      if (plan.phases[phase].kind != plans.front().phases[phase].kind) return out;
    }
  }
  for (GroupSharing& sharing : out) {
    sharing.bound_s.assign(phases, 0.0);
    sharing.bound_scale_out.assign(phases, 0);
    sharing.edge_share_Bps.assign(phases, {});
  }
  for (size_t phase = 0; phase < phases; ++phase) share_phase(models, plans, phase, rate_Bps, out);
  return out;
}

}  // namespace treering::model
