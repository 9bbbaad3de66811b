#include "treering/sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "memory_budget.hpp"
#include "treering/sim/engine_info.hpp"
#include "plan_traffic.hpp"
#include "platform.hpp"
#include "replayer.hpp"
#include "plan_events.hpp"

namespace treering::sim {
namespace {

void count_link_bytes(const topologies::Topology& topology, const model::DecodePlan& plan, int from_rank, int to_rank,
                      double bytes, const std::vector<bool>* down, std::vector<double>& link_bytes) {
  for (topologies::LinkId id : topology.route(plan.gpus[static_cast<size_t>(from_rank)], plan.gpus[static_cast<size_t>(to_rank)], down).links) {
    link_bytes[static_cast<size_t>(id)] += bytes;
  }
}

}  // namespace

namespace {

// A plan made by this model (its GPUs, in its order), whose transfers name its ranks.
void check_plan(const model::DecodeModel& model, const model::DecodePlan& plan) {
  if (plan.gpus != model.group().gpus) throw std::invalid_argument("replay: the plan was made for other GPUs than the model's");
  if (plan.shards.size() != plan.gpus.size()) throw std::invalid_argument("replay: the plan has one shard per GPU");
  const int ranks = static_cast<int>(plan.gpus.size());
  for (const model::Phase& phase : plan.phases) {
    for (const model::Transfer& t : phase.sends) {
      if (t.from < 0 || t.from >= ranks || t.to < 0 || t.to >= ranks || !(t.bytes >= 0)) {
        throw std::invalid_argument("replay: the plan's phase '" + phase.label + "' sends from rank " +
                                    std::to_string(t.from) + " to rank " + std::to_string(t.to) + " (of " +
                                    std::to_string(ranks) + ")");
      }
      if (t.from == t.to) {  // no route: SimGrid would abort
        throw std::invalid_argument("replay: the plan's phase '" + phase.label + "' sends from rank " +
                                    std::to_string(t.from) + " to itself");
      }
    }
  }
}

// Links at a fraction of their bandwidth in (0, 1] (0 would never deliver), GPUs slowed by a factor > 0.
void check_degradation(const topologies::Topology& topology, const Degradation& degradation) {
  for (const auto& [id, factor] : degradation.link_bandwidth_factor) {
    if (id < 0 || id >= topology.link_count() || !(factor > 0 && factor <= 1)) {
      throw std::invalid_argument("replay: link " + std::to_string(id) + " at a bandwidth factor of " +
                                  std::to_string(factor) + " (a link of the topology, factor in (0, 1])");
    }
  }
  for (const auto& [gpu, slowdown] : degradation.gpu_slowdown) {
    if (!(slowdown > 0) || !std::isfinite(slowdown)) {
      throw std::invalid_argument("replay: GPU " + std::to_string(gpu) + " slowed by a factor of " +
                                  std::to_string(slowdown) + " (more than 0)");
    }
  }
}

}  // namespace

ReplayResult replay_plan(const model::DecodeModel& model, const model::DecodePlan& plan, const ReplayOptions& options) {
  check_plan(model, plan);
  check_degradation(model.topology(), options.degradation);
  ReplayResult result;
  const topologies::Topology& topology = model.topology();
  result.link_bytes.assign(static_cast<size_t>(topology.link_count()), 0.0);
  const std::vector<bool>* down = options.degradation.cables_down.empty() ? nullptr : &options.degradation.cables_down;
  std::vector<model::CollectiveSchedule> schedules;
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind != model::PhaseKind::collective) continue;
    schedules.push_back(model.collective_schedule(phase));
    for (const model::CollectiveFlow& flow : schedules.back().flows) {
      count_link_bytes(topology, plan, flow.from, flow.to, flow.bytes, down, result.link_bytes);
    }
  }
  for (const auto& [pair, bytes] : point_to_point_bytes(plan)) {
    count_link_bytes(topology, plan, pair.first, pair.second, bytes, down, result.link_bytes);
  }
  double flows = 0;
  for (const model::CollectiveSchedule& schedule : schedules) flows += static_cast<double>(schedule.flows.size());
  // Our event loop replays it (plan_events.hpp), unless asked for SimGrid's actors, which keep one engine per
  // process and whose clock does not restart: SimGrid runs in a child process.
  const bool events = !options.in_simgrid && detail::plan_events_replay(plan);
  check_replay_memory(plan, flows, !events);
  const std::vector<double> values =
      events ? detail::replay_plan_events(model, plan, schedules, options)
             : run_in_child([&] { return detail::Replayer(model, plan, schedules, options).run(); });
  const size_t ranks = plan.gpus.size();
  const size_t header = 1 + ranks + 7 + plan.phases.size();
  if (values.size() < header || (values.size() - header) % 6 != 0) throw std::runtime_error("simulator: truncated results");
  result.transfers_simulated = static_cast<long long>(values.front());
  result.engine = events ? "event loop" : "SimGrid " + simgrid_version();
  result.rank_finish_s.assign(values.begin() + 1, values.begin() + 1 + static_cast<std::ptrdiff_t>(ranks));
  const double* critical = values.data() + 1 + ranks;
  result.critical = {static_cast<int>(critical[0]), critical[1], critical[2], critical[3], critical[4], critical[5],
                     critical[6], std::vector<double>(critical + 7, critical + 7 + plan.phases.size())};
  for (size_t i = header; i < values.size(); i += 6) {
    result.activities.push_back({static_cast<int>(values[i]), static_cast<ActivityKind>(static_cast<int>(values[i + 1])),
                                 values[i + 2], values[i + 3], static_cast<int>(values[i + 4]),
                                 static_cast<int>(values[i + 5])});
  }
  result.latency_s = *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  return result;
}

}  // namespace treering::sim
