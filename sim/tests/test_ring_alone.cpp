// Rings whose blocks each cross links nothing else uses are computed round by round without events
// (sim/src/rank_programs_ring.cpp): the same finishes, breakdown and phases as replaying every event, to 1e-9,
// wherever it applies; and where a link is shared it does not apply.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "same_as_simgrid.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

const char* const kRoundByRound = "rings computed round by round (no block shares a link)";

bool took(const sim::ReplayResult& replay, const std::string& shortcut) {
  return std::find(replay.shortcuts.begin(), replay.shortcuts.end(), shortcut) != replay.shortcuts.end();
}

// The defaults (shortcuts allowed) against every event (skip_steady_rounds off), for `groups` at once.
void check_round_by_round(const std::vector<sim::GroupPlan>& groups, sim::ReplayOptions options = {},
                          bool applies = true) {
  const sim::ReplayResult computed = sim::replay_groups(groups, options);
  options.skip_steady_rounds = false;
  const sim::ReplayResult every_event = sim::replay_groups(groups, options);
  CHECK(took(computed, kRoundByRound) == applies);
  CHECK_FALSE(took(every_event, kRoundByRound));
  CHECK(computed.transfers_simulated == every_event.transfers_simulated);
  sim::testing::check_same_finishes(computed, every_event);
}

void check_round_by_round(const model::DecodeModel& model, const model::DecodePlan& plan,
                          sim::ReplayOptions options = {}, bool applies = true) {
  check_round_by_round({{&model, &plan, 0}}, options, applies);
}

model::Workload mha16() { return model::find_workload("paper-mha16"); }

}  // namespace

TEST_CASE("a ring of uneven blocks on NVSwitch nodes over a rail network, computed round by round") {
  for (int nodes : {1, 2, 3}) {
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
    const model::DecodeModel model(topology);
    CAPTURE(nodes);
    check_round_by_round(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'000'003));
  }
}

TEST_CASE("round by round: without overlap, with host round trips and two exchanges, with empty blocks") {
  const topologies::Topology topology = topologies::build_topology("dgx-a100", {2, {}});
  const model::DecodeModel model(topology);
  model::PlanOptions no_overlap;
  no_overlap.ring_overlap = false;
  check_round_by_round(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001, no_overlap));
  model::DecodePlan busy_host = model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001);
  busy_host.costs.ring_step_host_s = 7e-6;
  busy_host.costs.ring_exchanges_per_step = 2;
  check_round_by_round(model, busy_host);
  check_round_by_round(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 11));  // 11 tokens on 16 GPUs
}

TEST_CASE("round by round: ranks that reach the ring at different times, mixed GPUs split by speed") {
  const topologies::Topology dgx = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(dgx);
  model::DecodePlan late = model.plan(model::DecodeAlgorithm::ring, mha16(), 1'000'001);
  model::Phase copy;  // the last rank copies 2 GB first (an implementation's concatenation): it starts late
  copy.kind = model::PhaseKind::elementwise;
  copy.label = "copy";
  copy.bytes = 2e9;
  copy.ranks = topologies::ExtraRanks::last;
  late.phases.insert(late.phases.begin(), copy);
  check_round_by_round(model, late);
  const topologies::Topology mixed =
      topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel mixed_model(mixed);
  model::PlanOptions by_speed;
  by_speed.split = model::TokenSplit::by_speed;
  check_round_by_round(mixed_model, mixed_model.plan(model::DecodeAlgorithm::ring, mha16(), 2'000'000, by_speed));
}

TEST_CASE("round by round: a slow NIC, a cable down and a slow GPU") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  sim::ReplayOptions options;
  sim::slow_nic(topology, 7, 0.25, options.degradation);
  sim::take_down(topology, "rail0/leaf0", "spine0", options.degradation);
  options.degradation.gpu_slowdown[3] = 1.5;
  check_round_by_round(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'600'005), options);
}

TEST_CASE("round by round: the CP groups of a layout at once, each ring on links of its own") {
  // tp 4 x cp 4 on 2 DGX H100: CP group t = {t, t + 4, t + 8, t + 12}; every GPU has its own NVSwitch port and NIC.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  std::vector<model::DecodeModel> models;
  for (int t = 0; t < 4; ++t) models.emplace_back(topology, std::vector<int>{t, t + 4, t + 8, t + 12});
  std::vector<model::DecodePlan> plans;
  for (const model::DecodeModel& model : models)
    plans.push_back(model.plan(model::DecodeAlgorithm::ring, mha16(), 4'000'001));
  std::vector<sim::GroupPlan> groups;
  for (size_t t = 0; t < 4; ++t) groups.push_back({&models[t], &plans[t], 0});
  sim::ReplayOptions every_group;
  every_group.one_of_identical = false;
  check_round_by_round(groups, every_group);
}

TEST_CASE("not round by round where ring edges share a link: PCIe boxes whose edges share switch uplinks") {
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {2, {}});
  const model::DecodeModel model(topology);
  check_round_by_round(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 160'007), {}, false);
}
