// The event loop (sim/src/event_network.hpp) replaying rings against SimGrid's network replaying every round of
// the same plan (same_as_simgrid.hpp), on clusters with and without links shared between ring edges.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "same_as_simgrid.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using treering::sim::testing::check_same_as_simgrid;

namespace {

model::Workload mha16() { return model::find_workload("paper-mha16"); }

}  // namespace

TEST_CASE("event loop, ring: uneven blocks on NVSwitch nodes across a rail network, as SimGrid replays them") {
  for (int nodes : {1, 2, 3}) {
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
    const model::DecodeModel model(topology);
    CAPTURE(nodes);
    check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'000'003));
  }
}

TEST_CASE("event loop, ring: PCIe boxes whose ring edges share switch uplinks (max-min sharing)") {
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {2, {}});
  const model::DecodeModel model(topology);
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 160'007));
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 16 * 10'000));  // equal blocks
}

TEST_CASE("event loop, ring: the timeline recorded, without overlap, with host round trips and two exchanges") {
  const topologies::Topology topology = topologies::build_topology("dgx-a100", {2, {}});
  const model::DecodeModel model(topology);
  model::PlanOptions no_overlap;
  no_overlap.ring_overlap = false;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001, no_overlap), {true});
  model::DecodePlan busy_host = model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001);
  busy_host.costs.ring_step_host_s = 7e-6;
  busy_host.costs.ring_exchanges_per_step = 2;
  check_same_as_simgrid(model, busy_host, {true});
}

TEST_CASE("event loop, ring: empty blocks, mixed GPUs split by speed, pass-q") {
  const topologies::Topology dgx = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(dgx);
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 11), {true});  // 11 tokens, 16 GPUs
  model::Workload batched = mha16();
  batched.batch = 5;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::pass_q, batched, 640'003), {true});
  const topologies::Topology mixed =
      topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel mixed_model(mixed);
  model::PlanOptions by_speed;
  by_speed.split = model::TokenSplit::by_speed;
  check_same_as_simgrid(mixed_model, mixed_model.plan(model::DecodeAlgorithm::ring, mha16(), 2'000'000, by_speed));
}

TEST_CASE("event loop, ring: a slow NIC, a cable down and a slow GPU") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  sim::ReplayOptions options;
  sim::slow_nic(topology, 7, 0.25, options.degradation);
  options.degradation.gpu_slowdown[3] = 1.5;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'600'005), options);
}
