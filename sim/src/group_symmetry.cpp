// Groups alike and apart (group_symmetry.hpp).
#include "group_symmetry.hpp"

#include <map>
#include <tuple>

#include "plan_traffic.hpp"

namespace treering::sim::detail {
namespace {

bool same_phase(const model::Phase& a, const model::Phase& b) {
  if (std::tie(a.kind, a.op, a.bytes, a.merge_states, a.algorithm, a.element_bytes, a.kernels, a.ranks, a.time_s,
               a.once_per_call, a.merge_fraction) != std::tie(b.kind, b.op, b.bytes, b.merge_states, b.algorithm,
                                                              b.element_bytes, b.kernels, b.ranks, b.time_s,
                                                              b.once_per_call, b.merge_fraction)) {
    return false;
  }
  if (a.sends.size() != b.sends.size()) return false;
  for (size_t i = 0; i < a.sends.size(); ++i) {
    if (std::tie(a.sends[i].from, a.sends[i].to, a.sends[i].bytes) !=
        std::tie(b.sends[i].from, b.sends[i].to, b.sends[i].bytes)) {
      return false;
    }
  }
  return true;
}

// The same plan but for its GPUs.
bool same_plan(const model::DecodePlan& a, const model::DecodePlan& b) {
  if (a.algorithm != b.algorithm || a.seq_len != b.seq_len || a.gpus.size() != b.gpus.size() ||
      a.phases.size() != b.phases.size() || a.ring_overlap != b.ring_overlap || a.costs != b.costs ||
      a.sizes.kv_bytes_per_token != b.sizes.kv_bytes_per_token || a.sizes.state_bytes != b.sizes.state_bytes ||
      a.sizes.q_bytes != b.sizes.q_bytes || a.sizes.stats_bytes != b.sizes.stats_bytes) {
    return false;
  }
  for (size_t i = 0; i < a.shards.size(); ++i) {
    if (a.shards[i].first != b.shards[i].first || a.shards[i].count != b.shards[i].count) return false;
  }
  for (size_t i = 0; i < a.phases.size(); ++i) {
    if (!same_phase(a.phases[i], b.phases[i])) return false;
  }
  return true;
}

// What the replay of a group depends on besides its plan, as numbers: per rank its node group, domain (numbered
// by first appearance) and compute rates; per collective its choice; per flow its route, each link as the order
// of its first appearance in the group and its rate.
std::vector<double> signature(const GroupRun& group, const std::vector<double>& link_units_per_s) {
  const topologies::Topology& topology = group.model->topology();
  std::vector<double> out;
  std::map<int, int> domain_number;
  for (size_t local = 0; local < group.plan->gpus.size(); ++local) {
    const int gpu = group.plan->gpus[local];
    const model::ComputeRates& rates = group.model->rates(static_cast<int>(local));
    const int domain =
        domain_number.emplace(topology.domain_of_gpu(gpu), static_cast<int>(domain_number.size())).first->second;
    out.insert(out.end(), {static_cast<double>(topology.node(topology.node_of_gpu(gpu)).group),
                           static_cast<double>(domain), rates.hbm_Bps, rates.peak_flops, rates.launch_s});
  }
  for (const model::CollectiveSchedule& schedule : group.schedules) {
    out.insert(out.end(),
               {static_cast<double>(schedule.chosen.algorithm), static_cast<double>(schedule.chosen.protocol),
                schedule.chosen.latency_s, static_cast<double>(schedule.flows.size())});
    for (const model::CollectiveFlow& flow : schedule.flows)
      out.insert(out.end(), {flow.wire_bytes, flow.max_rate_Bps});
  }
  std::map<topologies::LinkId, int> link_number;
  for (const auto& [from, to] : group_flows(group)) {
    const std::vector<topologies::LinkId> links =
        topology.route(group.plan->gpus[static_cast<size_t>(from)], group.plan->gpus[static_cast<size_t>(to)]).links;
    out.push_back(static_cast<double>(links.size()));
    for (topologies::LinkId id : links) {
      out.push_back(link_number.emplace(id, static_cast<int>(link_number.size())).first->second);
      out.push_back(link_units_per_s[static_cast<size_t>(id)]);
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<int, int>> group_flows(const GroupRun& group) {
  std::vector<std::pair<int, int>> flows;
  for (const auto& [pair, bytes] : point_to_point_bytes(*group.plan)) flows.push_back(pair);
  for (const model::CollectiveSchedule& schedule : group.schedules) {
    for (const model::CollectiveFlow& flow : schedule.flows) flows.emplace_back(flow.from, flow.to);
  }
  return flows;
}

bool groups_alike_and_apart(const std::vector<GroupRun>& groups, const std::vector<double>& link_units_per_s) {
  if (groups.size() < 2) return false;
  std::vector<int> owner(link_units_per_s.size(), -1);
  const topologies::Topology& topology = groups.front().model->topology();
  for (size_t g = 0; g < groups.size(); ++g) {
    const GroupRun& group = groups[g];
    if (group.stage != 0 || !same_plan(*group.plan, *groups.front().plan)) return false;
    for (const auto& [from, to] : group_flows(group)) {
      for (topologies::LinkId id :
           topology.route(group.plan->gpus[static_cast<size_t>(from)], group.plan->gpus[static_cast<size_t>(to)])
               .links) {
        int& holder = owner[static_cast<size_t>(id)];
        if (holder >= 0 && holder != static_cast<int>(g)) return false;
        holder = static_cast<int>(g);
      }
    }
  }
  const std::vector<double> first = signature(groups.front(), link_units_per_s);
  for (size_t g = 1; g < groups.size(); ++g) {
    if (signature(groups[g], link_units_per_s) != first) return false;
  }
  return true;
}

}  // namespace treering::sim::detail
