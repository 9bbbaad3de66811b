// A rank's sends across nodes in one phase leave one proxy post apart (3 us, NCCL's netOverhead for Simple), in
// the model and in both replay engines, as the all-to-all model charges them.
#include <doctest/doctest.h>

#include "same_as_simgrid.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// 4 DGX H100, one GPU of each: every pair crosses the network (send/recv 8.4 + 14 + 3 + 5.0 = 30.4 us with the shared
// buffer slot's post and the clear-to-send, 46 GB/s).
model::DecodeModel four_nodes(const topologies::Topology& topology) {
  return model::DecodeModel(topology, {0, 8, 16, 24});
}

}  // namespace

TEST_CASE("a2a on 4 nodes: each rank's 3 network sends leave at 30.4, 33.4 and 36.4 us") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {4, {}});
  const model::DecodeModel decode = four_nodes(topology);
  const model::DecodePlan plan = decode.plan(model::DecodeAlgorithm::a2a, model::find_workload("paper-mha16"), 64000);
  const std::vector<double> leave_s = decode.group_send_latencies_s(0, {1, 2, 3}, {1024, 1024, 1024});
  REQUIRE(leave_s.size() == 3);
  CHECK(leave_s[0] == doctest::Approx(30.4e-6).scale(1e-12));
  CHECK(leave_s[1] == doctest::Approx(33.4e-6).scale(1e-12));
  CHECK(leave_s[2] == doctest::Approx(36.4e-6).scale(1e-12));
  const model::DecodeResult predicted = decode.evaluate(plan);
  // The all-to-all phase: the last sends leave at 36.4 us; 16 heads x (128 x 2 B + 4 B) / 4 = 1,040 B per
  // peer. Rank 0's NIC is free by then, but rank 3's receives the third send of each of the 3 others (their
  // sends go in peer order, rank 3 last) at 36.4 us, one after another at 46 GB/s: 36.4 us + 3 x 1040 B / 46 GB/s.
  const auto phase = std::find_if(predicted.phases.begin(), predicted.phases.end(), [](const model::PhaseTime& p) {
    return p.label.find("all-to-all") != std::string::npos;
  });
  REQUIRE(phase != predicted.phases.end());
  CHECK(phase->time_s == doctest::Approx(36.4e-6 + 3 * 1040 / 46e9).scale(1e-12).epsilon(1e-6));
  CHECK(sim::replay_plan(decode, plan).latency_s == doctest::Approx(predicted.latency_s).scale(1e-12).epsilon(1e-9));
  sim::testing::check_same_as_simgrid(decode, plan);
}
