// replay_plan and replay_groups (replay.hpp): checks, bytes per link, the groups as the ranks' programs take
// them, and the network that runs them: our event loop here, or SimGrid in a child process.
#include "treering/sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "event_network.hpp"
#include "group_symmetry.hpp"
#include "memory_budget.hpp"
#include "plan_traffic.hpp"
#include "rank_programs.hpp"
#include "replay_codec.hpp"
#include "simgrid_network.hpp"
#include "simulated_units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::sim {
namespace {

// A plan made by this model (its GPUs, in its order), whose transfers name its ranks.
void check_plan(const model::DecodeModel& model, const model::DecodePlan& plan) {
  if (plan.gpus != model.group().gpus)
    throw std::logic_error("replay: the plan was made for other GPUs than the model's");
  if (plan.shards.size() != plan.gpus.size()) throw std::logic_error("replay: the plan has one shard per GPU");
  const int ranks = static_cast<int>(plan.gpus.size());
  for (const model::Phase& phase : plan.phases) {
    for (const model::Transfer& t : phase.sends) {
      if (t.from < 0 || t.from >= ranks || t.to < 0 || t.to >= ranks || !(t.bytes >= 0)) {
        throw std::logic_error("replay: the plan's phase '" + phase.label + "' sends from rank " +
                               std::to_string(t.from) + " to rank " + std::to_string(t.to) + " (of " +
                               std::to_string(ranks) + ")");
      }
      if (t.from == t.to) {  // no route
        throw std::logic_error("replay: the plan's phase '" + phase.label + "' sends from rank " +
                               std::to_string(t.from) + " to itself");
      }
    }
  }
}

// Links at a fraction of their bandwidth in (0, 1] (0 would never deliver), GPUs slowed by a factor > 0.
void check_degradation(const topologies::Topology& topology, const Degradation& degradation) {
  for (const auto& [id, factor] : degradation.link_bandwidth_factor) {
    if (id < 0 || id >= topology.link_count() || !(factor > 0 && factor <= 1)) {
      throw topologies::InputError("replay: link " + std::to_string(id) + " at a bandwidth factor of " +
                                   std::to_string(factor) + " (a link of the topology, factor in (0, 1])");
    }
  }
  for (const auto& [gpu, slowdown] : degradation.gpu_slowdown) {
    if (!(slowdown > 0) || !std::isfinite(slowdown)) {
      throw topologies::InputError("replay: GPU " + std::to_string(gpu) + " slowed by a factor of " +
                                   std::to_string(slowdown) + " (more than 0)");
    }
  }
}

std::vector<double> link_rates(const topologies::Topology& topology, const Degradation& degradation) {
  const model::LinkEfficiency efficiency = model::link_efficiency(topology);
  std::vector<double> units_per_s(static_cast<size_t>(topology.link_count()));
  for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
    units_per_s[static_cast<size_t>(id)] = link_units_per_s(topology, efficiency, &degradation, id);
  }
  return units_per_s;
}

// Bytes over every link: each group's point-to-point sends and collective flows along their routes, each pair
// of GPUs routed once (a plan's all-reduces move between the same pairs).
std::vector<double> link_bytes(const std::vector<detail::GroupRun>& groups, const std::vector<bool>* down) {
  const topologies::Topology& topology = groups.front().model->topology();
  std::unordered_map<long long, double> by_pair;  // from GPU x GPUs + to GPU -> bytes
  const long long gpus = topology.gpu_count();
  for (const detail::GroupRun& group : groups) {
    auto add = [&](int from, int to, double moved) {
      by_pair[group.plan->gpus[static_cast<size_t>(from)] * gpus + group.plan->gpus[static_cast<size_t>(to)]] += moved;
    };
    for (const model::CollectiveSchedule& schedule : group.schedules) {
      for (const model::CollectiveFlow& flow : schedule.flows) add(flow.from, flow.to, flow.bytes);
    }
    for (const auto& [pair, moved] : point_to_point_bytes(*group.plan)) add(pair.first, pair.second, moved);
  }
  std::vector<double> bytes(static_cast<size_t>(topology.link_count()), 0.0);
  for (const auto& [pair, moved] : by_pair) {
    for (topologies::LinkId id :
         topology.route(static_cast<int>(pair / gpus), static_cast<int>(pair % gpus), down).links) {
      bytes[static_cast<size_t>(id)] += moved;
    }
  }
  return bytes;
}

std::vector<detail::GroupRun> group_runs(const std::vector<GroupPlan>& groups) {
  std::vector<detail::GroupRun> runs;
  for (const GroupPlan& group : groups) {
    if (!group.model || !group.plan) throw std::logic_error("replay: a group without its model or plan");
    check_plan(*group.model, *group.plan);
    detail::GroupRun run{group.model, group.plan, group.stage, {}, {}};
    if (group.schedules) {
      run.schedules = *group.schedules;
    } else {
      for (const model::Phase& phase : group.plan->phases) {
        if (phase.kind == model::PhaseKind::collective)
          run.schedules.push_back(group.model->collective_schedule(phase));
      }
    }
    size_t collectives = 0;
    for (const model::Phase& phase : group.plan->phases)
      collectives += phase.kind == model::PhaseKind::collective ? 1 : 0;
    if (run.schedules.size() != collectives)
      throw std::logic_error("replay: a plan's collectives and their flows do not match");
    runs.push_back(std::move(run));
  }
  return runs;
}

// The replay in this process on our event loop, or in a child process on SimGrid's network.
ReplayResult run_programs(const detail::ReplayRun& run, const ReplayOptions& options, double most_flows) {
  const topologies::Topology& topology = run.topology();
  if (!options.in_simgrid) {
    detail::EventNetwork network(link_rates(topology, options.degradation));
    ReplayResult result = detail::RankPrograms(run, options, network).run();
    result.engine = network.name();
    return result;
  }
  return detail::decode_replay(run_in_child([&] {
    detail::SimGridNetwork network(topology, &options.degradation, 1 + 2 * most_flows);
    ReplayResult result = detail::RankPrograms(run, options, network).run();
    result.engine = network.name();
    return detail::encode(result);
  }));
}

// The first group's outcome given to every group (they are alike: group_symmetry.hpp), rank by rank.
ReplayResult as_every_group(const detail::ReplayRun& all, const ReplayResult& first) {
  ReplayResult result = first;
  result.gpus = all.gpus();
  const std::vector<int>& members = all.group(0).members;
  result.rank_finish_s.assign(all.gpus().size(), 0.0);
  for (StageOutcome& stage : result.stages) stage.finish_s.assign(all.gpus().size(), -1.0);
  for (const detail::GroupRun& group : all.groups()) {
    for (size_t local = 0; local < group.members.size(); ++local) {
      const size_t rank = static_cast<size_t>(group.members[local]);
      result.rank_finish_s[rank] = first.rank_finish_s[static_cast<size_t>(members[local])];
      result.stages[0].finish_s[rank] = first.stages[0].finish_s[static_cast<size_t>(members[local])];
    }
  }
  result.groups = static_cast<int>(all.groups().size());
  result.groups_replayed = 1;
  result.shortcuts.push_back("1 of " + std::to_string(result.groups) +
                             " identical groups replayed (they share no link)");
  return result;
}

}  // namespace

ReplayResult replay_groups(const std::vector<GroupPlan>& groups, const ReplayOptions& options) {
  if (groups.empty()) throw std::logic_error("replay: no plan to replay");
  const topologies::Topology& topology = groups.front().model->topology();
  check_degradation(topology, options.degradation);
  const detail::ReplayRun run(group_runs(groups));
  const std::vector<bool>* down = options.degradation.cables_down.empty() ? nullptr : &options.degradation.cables_down;
  double flows = 0, most_flows = 0;  // collective flows in all; flows that may be under way at once
  for (const detail::GroupRun& group : run.groups()) {
    double most = static_cast<double>(group.plan->gpus.size());
    for (const model::CollectiveSchedule& schedule : group.schedules) {
      flows += static_cast<double>(schedule.flows.size());
      most = std::max(most, static_cast<double>(schedule.flows.size()));
    }
    for (const model::Phase& phase : group.plan->phases) most = std::max(most, static_cast<double>(phase.sends.size()));
    most_flows += most;
  }
  const bool one_for_all = options.one_of_identical && !options.record_activities && options.degradation.empty() &&
                           detail::groups_alike_and_apart(run.groups(), link_rates(topology, options.degradation));
  ReplayResult result;
  if (one_for_all) {
    const detail::ReplayRun first({run.group(0)});
    check_replay_memory(first.ranks(), flows / static_cast<double>(run.groups().size()),
                        most_flows / static_cast<double>(run.groups().size()), options.in_simgrid,
                        options.memory_budget_bytes);
    result = as_every_group(run, run_programs(first, options, most_flows / static_cast<double>(run.groups().size())));
  } else {
    check_replay_memory(run.ranks(), flows, most_flows, options.in_simgrid, options.memory_budget_bytes);
    result = run_programs(run, options, most_flows);
  }
  result.link_bytes = link_bytes(run.groups(), down);
  return result;
}

ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options) {
  return replay_groups({{&model, &plan, 0}}, options);
}

}  // namespace treering::sim
