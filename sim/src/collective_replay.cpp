// simulate_collective (collective_replay.hpp): a plan of one collective phase, its flows given.
#include "treering/sim/collective_replay.hpp"

#include "treering/sim/layout_replay.hpp"

namespace treering::sim {

SimulatedCollective simulate_collective(const topologies::Topology& topology, const model::CommGroup& group,
                                        model::CollectiveOp op, double bytes, const model::CollectiveCandidate& chosen,
                                        const ReplayOptions& options) {
  std::vector<int> domains;
  for (int gpu : group.gpus) domains.push_back(topology.domain_of_gpu(gpu));
  const std::vector<model::CollectiveSchedule> schedules{model::collective_schedule(group, domains, op, bytes, chosen)};
  const model::DecodeModel costs(topology, group.gpus);
  model::DecodePlan plan;
  plan.gpus = group.gpus;
  plan.shards.assign(group.gpus.size(), {});
  model::Phase phase;
  phase.kind = model::PhaseKind::collective;
  phase.label = std::string(model::to_string(op));
  phase.op = op;
  phase.bytes = bytes;
  phase.algorithm = chosen.algorithm;
  plan.phases.push_back(phase);
  const ReplayResult replay = replay_groups({{&costs, &plan, 0, &schedules}}, options);
  SimulatedCollective out{replay.latency_s, replay.transfers_simulated, replay.link_bytes, 0.0, replay.engine};
  const std::vector<LinkLoad> busiest = busiest_links(topology, replay, 1);
  if (!busiest.empty()) out.busiest_utilisation = busiest.front().utilisation;
  return out;
}

}  // namespace treering::sim
