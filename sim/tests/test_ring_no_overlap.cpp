// The ring without overlap (PlanOptions::ring_overlap false, as realrun's cpu backend runs it): a round takes
// the attention and then the transfer, in the plan's steps, the model and the simulator.
#include <doctest/doctest.h>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("ring steps without overlap: attend, then send and wait, then receive") {
  model::PlanOptions options;
  options.ring_overlap = false;
  const model::DecodePlan plan =
      model::make_plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 8, {0, 1}, {0, 0}, options);
  const std::vector<model::Step> steps = model::steps_of(plan, 0);
  REQUIRE(steps.size() >= 3);
  CHECK(steps[0].kind == model::StepKind::compute);
  CHECK(steps[1].kind == model::StepKind::send);
  CHECK_FALSE(steps[1].overlaps_next);
  CHECK(steps[2].kind == model::StepKind::receive);
}

TEST_CASE("ring in one DGX H100 without overlap: each round attention plus transfer, model and simulator alike") {
  // 8 ranks x 64,000 tokens: a block is 524,288,000 B. A round: its attention (launch + the block, q, o and the
  // merge's reads at 3.35 TB/s x 0.80), then the send, 11.8 us (p2p Simple: ring base 8.4 + NVLink step 3.4) +
  // block / 360 GB/s (450 x 0.80) = 1.468 ms. 7 rounds send; the 8th attention and the normalisation follow.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  model::PlanOptions options;
  options.ring_overlap = false;
  const model::DecodePlan plan =
      model.plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 8 * 64000, options);
  const double block = 64000 * 8192.0;
  const model::ComputeRates& rates = model.rates(0);
  const double attention = rates.launch_s + (block + 4096 + 4096 + 64 + 2 * 4160) / rates.hbm_Bps;
  const double normalise = rates.launch_s + 4096 / rates.hbm_Bps;
  const double expected_s = 8 * attention + 7 * (11.8e-6 + block / 360e9) + normalise;
  const model::DecodeResult predicted = model.evaluate(plan);
  CHECK(predicted.latency_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
  CHECK(predicted.breakdown.overlapped_communication_s == 0);
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
  sim::ReplayOptions every_round;
  every_round.skip_steady_rounds = false;
  CHECK(sim::replay_plan(model, plan, every_round).latency_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
}
