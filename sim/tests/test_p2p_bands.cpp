// Measured send/recv bands (calibration p2p) reach both engines: a ring's transfer takes its band's time in the
// model and in the simulator, worked out by hand.
#include <doctest/doctest.h>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

// One DGX H100 whose sends inside the node were measured with a knee: 20 us + n / 11 GB/s below 8 MiB,
// 100 us + n / 4.4 GB/s from 8 MiB.
topologies::Topology banded_dgx() {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {1, std::nullopt});
  topologies::Calibration c;
  c.provenance.inputs = {"synthetic"};
  c.p2p_scale_up = {{0, 20e-6, 11e9}, {8 * MiB, 100e-6, 4.4e9}};
  spec.calibration = c;
  return topologies::Topology(spec);
}

}  // namespace

TEST_CASE("a pair's send takes the time of the band its size falls in") {
  const topologies::Topology topology = banded_dgx();
  const model::DecodeModel model(topology, {0, 1});
  CHECK(model.p2p(0, 1).time_s(4 * MiB) == doctest::Approx(20e-6 + 4 * MiB / 11e9).scale(1e-12));      // 401.3 us
  CHECK(model.p2p(0, 1).time_s(32768000) == doctest::Approx(100e-6 + 32768000 / 4.4e9).scale(1e-12));  // 7,547 us
}

TEST_CASE("a ring without overlap: the model's exposed transfer and the simulator's latency follow the band") {
  // 2 ranks at 8,000 tokens: one round sends a block of 4,000 tokens x 8,192 B = 32,768,000 B (>= 8 MiB):
  // 100 us + 32,768,000 B / 4.4 GB/s = 7,547.3 us, exposed whole (no overlap).
  const topologies::Topology topology = banded_dgx();
  const model::DecodeModel model(topology, {0, 1});
  model::PlanOptions options;
  options.ring_overlap = false;
  const model::DecodePlan plan =
      model.plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 8000, options);
  const model::DecodeResult predicted = model.evaluate(plan);
  CHECK(predicted.breakdown.intra_node_s == doctest::Approx(100e-6 + 32768000 / 4.4e9).scale(1e-12).epsilon(1e-9));
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(predicted.latency_s).scale(1e-12).epsilon(1e-6));
}

TEST_CASE("tree-lse's small states take the lower band") {
  // 2 ranks: the state goes to the root, o in fp32 (16 x 128 x 4 B) + lse (16 x 4 B) = 8,256 B: 20 us + 8,256 B /
  // 11 GB/s = 20.751 us; then the root's o comes back, 8,192 B: 20.745 us. Both in the lower band (the
  // simulator agrees).
  const topologies::Topology topology = banded_dgx();
  const model::DecodeModel model(topology, {0, 1});
  model::PlanOptions options;
  options.partial_o_bytes = 4;
  const model::DecodePlan plan =
      model.plan(model::DecodeAlgorithm::tree_lse, model::find_workload("paper-mha16"), 8000, options);
  const model::DecodeResult predicted = model.evaluate(plan);
  CHECK(predicted.breakdown.intra_node_s ==
        doctest::Approx(20e-6 + 8256 / 11e9 + 20e-6 + 8192 / 11e9).scale(1e-12).epsilon(1e-9));
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(predicted.latency_s).scale(1e-12).epsilon(1e-6));
}
