// The event loop (sim/src/event_network.hpp) replaying collectives and transfer phases against SimGrid's network
// (same_as_simgrid.hpp): every algorithm, on clusters whose flows share links (PCIe uplinks, one NIC per box, a
// fat tree) and whose flows do not (NVSwitch nodes on a rail network), with host call times and degradations.
#include <doctest/doctest.h>

#include <string>

#include "same_as_simgrid.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using treering::sim::testing::check_same_as_simgrid;

namespace {

model::Workload batched(int batch) {
  model::Workload workload = model::find_workload("paper-mha16");
  workload.batch = batch;
  return workload;
}

// Every algorithm the model plans, with a timeline, as SimGrid replays it.
void check_every_algorithm(const model::DecodeModel& model, long long tokens, int batch) {
  for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    CAPTURE(model::to_string(algorithm));
    check_same_as_simgrid(model, model.plan(algorithm, batched(batch), tokens), {true});
  }
}

}  // namespace

TEST_CASE("event loop: every algorithm on NVSwitch nodes over a rail network (NVLS, trees, all-to-all)") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  check_every_algorithm(model, 1'000'003, 1);
  check_every_algorithm(model, 640'000, 5);  // pass-q's query blocks differ round to round; its all-to-all waits
                                             // for the ring's last sends
}

TEST_CASE("event loop: every algorithm in PCIe boxes whose flows share switch uplinks and one NIC a box") {
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {2, {}});
  const model::DecodeModel model(topology);
  check_every_algorithm(model, 160'007, 3);
}

TEST_CASE("event loop: all-reduces and broadcasts across a fat tree, 24 GPUs") {
  const topologies::Topology topology = topologies::build_topology("mi300x", {3, {}});
  const model::DecodeModel model(topology);
  for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::tree, model::DecodeAlgorithm::tree_lse,
                                           model::DecodeAlgorithm::allgather_merge, model::DecodeAlgorithm::a2a}) {
    CAPTURE(model::to_string(algorithm));
    check_same_as_simgrid(model, model.plan(algorithm, batched(1), 2'000'000));
  }
}

TEST_CASE("event loop: double binary trees over 16 nodes, with the host's call before each collective") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {16, {}});
  const model::DecodeModel model(topology);
  model::DecodePlan plan = model.plan(model::DecodeAlgorithm::tree, batched(1), 5'120'001);
  check_same_as_simgrid(model, plan);
  plan.costs.collective_call_s = 4e-6;
  check_same_as_simgrid(model, plan, {true});
}

TEST_CASE("event loop: a slow NIC, a cable down and a slow GPU under collectives and transfers") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  sim::ReplayOptions options;
  options.record_activities = true;
  sim::slow_nic(topology, 7, 0.25, options.degradation);
  sim::take_down(topology, "rail0/leaf0", "spine0", options.degradation);
  options.degradation.gpu_slowdown[3] = 1.5;
  for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::tree, model::DecodeAlgorithm::tree_fused,
                                           model::DecodeAlgorithm::tree_lse, model::DecodeAlgorithm::pass_q}) {
    CAPTURE(model::to_string(algorithm));
    check_same_as_simgrid(model, model.plan(algorithm, batched(2), 1'600'005), options);
  }
}

TEST_CASE("event loop: mixed H100 and H200 nodes split by speed") {
  const topologies::Topology mixed =
      topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel model(mixed);
  model::PlanOptions by_speed;
  by_speed.split = model::TokenSplit::by_speed;
  for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::tree, model::DecodeAlgorithm::tree_lse}) {
    CAPTURE(model::to_string(algorithm));
    check_same_as_simgrid(model, model.plan(algorithm, batched(1), 2'000'000, by_speed));
  }
}
