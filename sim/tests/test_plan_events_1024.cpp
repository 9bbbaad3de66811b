// The event loop at 1,024 GPUs, its ring skip ON (sim/src/ring_steady.hpp: once the ring is steady every rank
// goes straight to its last round), against SimGrid's network replaying every round: every algorithm the model
// plans gives the same latency, every rank's finish and the last rank's breakdown, to 1e-9. 128 DGX H100 nodes
// on their rail network; 1,024,000 tokens, 1,000 a GPU, so that the ring's blocks are equal and the skip applies
// (pass-q's query blocks differ round to round: it never skips, and is replayed whole by both).
#include <doctest/doctest.h>

#include <string>

#include "../src/ring_steady.hpp"
#include "same_as_simgrid.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

void check_skip_same_as_simgrid(const model::DecodeModel& model, const model::DecodePlan& plan) {
  sim::ReplayOptions skipping;  // the defaults: the skip on, no timeline
  REQUIRE(skipping.skip_steady_rounds);
  sim::ReplayOptions every_round_in_simgrid;
  every_round_in_simgrid.skip_steady_rounds = false;
  every_round_in_simgrid.in_simgrid = true;
  const sim::ReplayResult events = sim::replay_plan(model, plan, skipping);
  const sim::ReplayResult simgrid = sim::replay_plan(model, plan, every_round_in_simgrid);
  bool has_ring = false;
  for (const model::Phase& phase : plan.phases) has_ring = has_ring || sim::detail::is_ring_phase(phase.kind);
  if (has_ring && sim::detail::skips_steady_rounds(plan, skipping)) {
    CHECK(events.transfers_simulated < simgrid.transfers_simulated / 10);  // the skip did skip
  } else {
    CHECK(events.transfers_simulated == simgrid.transfers_simulated);
  }
  REQUIRE(events.rank_finish_s.size() == 1024);
  sim::testing::check_same_finishes(events, simgrid);
}

}  // namespace

TEST_CASE("event loop with the ring skip on = SimGrid every round, every algorithm at 1,024 GPUs") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {128, {}});
  const model::DecodeModel model(topology);
  model::Workload workload = model::find_workload("paper-mha16");
  for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const std::string name = model::to_string(algorithm);
    CAPTURE(name);
    const model::DecodePlan plan = model.plan(algorithm, workload, 1'024'000);
    REQUIRE(plan.shards.size() == 1024);
    check_skip_same_as_simgrid(model, plan);
  }
}
