// A replay in the model's form: what is the replay's and what stays the model's.
#include <doctest/doctest.h>

#include "treering/sim/simulated_result.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE(
    "simulated result: the replay's latency and critical rank, the model's volumes; collectives by where the GPUs "
    "are") {
  const model::Workload workload = model::find_workload("paper-mha16");
  for (int nodes : {1, 2}) {
    CAPTURE(nodes);
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
    const model::DecodeModel decode(topology);
    const model::DecodePlan plan = decode.plan(model::DecodeAlgorithm::tree, workload, 80000);
    const model::DecodeResult predicted = decode.evaluate(plan);
    sim::ReplayResult replay = sim::replay_plan(decode, plan);
    const model::DecodeResult r = sim::simulated_result(decode, plan, predicted, replay);
    CHECK(r.latency_s == replay.latency_s);
    CHECK(r.token_s == doctest::Approx(workload.layers * replay.latency_s + predicted.weights_s).scale(1e-12));
    CHECK(r.volume.total == predicted.volume.total);  // bytes are the plan's: the model counts them
    CHECK(r.breakdown.compute_s == replay.critical.compute_s);
    // Tree's time outside compute is its three all-reduces: inside one node intra-node, across two inter-node.
    const double collectives_s = replay.critical.collective_s;
    CHECK(collectives_s > 0);
    CHECK((nodes == 1 ? r.breakdown.intra_node_s : r.breakdown.inter_node_s) ==
          doctest::Approx(collectives_s).scale(1e-12));
    REQUIRE(r.phases.size() == plan.phases.size());
    for (size_t i = 0; i < plan.phases.size(); ++i) {
      CHECK(r.phases[i].time_s == replay.critical.phase_s[i]);
      if (plan.phases[i].kind == model::PhaseKind::collective) CHECK(r.phases[i].inter_node == (nodes == 2));
    }
  }
}
