// The simulator refuses, with the figures, a replay that would not fit in the memory it may use.
#include <doctest/doctest.h>

#include <cstdlib>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("a replay over its memory budget is refused before it starts, naming both figures") {
  // One DGX H100, the ring: no collective flows; 64 MB + 8 ranks x 64 kB = 64.51 MB estimated.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 80000);
  ::setenv("TREERING_MEMORY_BYTES", "10e6", 1);
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, plan), doctest::Contains("would need about 64.51 MB of memory and 10 MB is available"),
                       std::invalid_argument);
  ::setenv("TREERING_MEMORY_BYTES", "100e6", 1);
  CHECK(sim::replay_plan(model, plan).latency_s > 0);
  ::unsetenv("TREERING_MEMORY_BYTES");
}
