// What-if replays: a slow GPU, a slow NIC, a cable down with the traffic routed around it.
#include <doctest/doctest.h>

#include <algorithm>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

const model::Workload& mha16() { return model::find_workload("paper-mha16"); }

}  // namespace

TEST_CASE("a straggler: GPU 3 of a DGX H100 at 1/20 speed sets the ring's pace") {
  // 8 ranks x 64,000 tokens. A block's attention takes a (0.196 ms), 20 a = 3.9 ms on GPU 3, longer than a
  // transfer (11.8 us + 524 MB / 360 GB/s = 1.47 ms). Every block passes GPU 3, which never waits: its 8
  // attentions and its normalisation n, each 20 times as long, make the latency: 8 x 20 a + 20 n.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 8 * 64000);
  const model::ComputeRates& rates = model.rates(0);
  const double a = rates.launch_s + (64000 * 8192.0 + 4096 + 4096 + 64 + 2 * 4160) / rates.hbm_Bps;
  const double n = rates.launch_s + 4096 / rates.hbm_Bps;
  sim::ReplayOptions options;
  options.degradation.gpu_slowdown[3] = 20;
  CHECK(sim::replay_plan(model, plan, options).latency_s ==
        doctest::Approx(8 * 20 * a + 20 * n).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("a slow NIC: GPU 0's NIC at a quarter of its rate slows two of the ring's four edges") {
  // GPU 0 of 4 nodes, one per node: each ring edge crosses two NICs at 46 GB/s (400 Gb/s x 0.92); a block of
  // 250,000 tokens x 8 KiB takes T = 2.048 GB / 46 GB/s = 44.5 ms; L = 30.4 us (p2p Simple across nodes). Edges
  // 3->0 and 0->1 cross GPU 0's NIC (in, out) at a quarter: 4T each. Attention a (0.77 ms) is far below T. The
  // edge 0->1 carries its 3 blocks one after another, each after its latency: block 3 reaches rank 1 at
  // 3 (L + 4T), which then attends and normalises: latency = 3L + 12T + a + n (healthy: 3(L + T) + a + n).
  // No pipelining shortens it: the slow link itself is busy from the first send to the last arrival.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {4, {}});
  const model::DecodeModel model(topology, {0, 8, 16, 24});
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 4 * 250000);
  const double T = 250000 * 8192.0 / 46e9;
  const double L = model.p2p(0, 1).latency_s;
  const model::ComputeRates& rates = model.rates(0);
  const double a = rates.launch_s + (250000 * 8192.0 + 4096 + 4096 + 64 + 2 * 4160) / rates.hbm_Bps;
  const double n = rates.launch_s + 4096 / rates.hbm_Bps;
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(3 * (L + T) + a + n).scale(1e-12).epsilon(1e-9));
  sim::ReplayOptions options;
  sim::slow_nic(topology, 0, 0.25, options.degradation);
  CHECK(sim::replay_plan(model, plan, options).latency_s ==
        doctest::Approx(3 * L + 12 * T + a + n).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("a cable down: routes avoid it where the network has another way, and say so where it has none") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  // GPU 0 (rail 0) to GPU 9 (node 1, rail 1) goes up to a spine: NIC, leaf, spine, leaf, NIC.
  const topologies::Route healthy = topology.route(0, 9);
  topologies::LinkId up = -1;
  for (topologies::LinkId id : healthy.links) {
    if (topology.device(topology.link(id).from).kind == topologies::DeviceKind::network_switch &&
        topology.device(topology.link(id).to).kind == topologies::DeviceKind::network_switch) {
      up = id;
      break;
    }
  }
  REQUIRE(up >= 0);
  sim::Degradation degradation;
  sim::take_down(topology, topology.device(topology.link(up).from).name, topology.device(topology.link(up).to).name,
                 degradation);
  const topologies::Route rerouted = topology.route(0, 9, &degradation.cables_down);
  CHECK(rerouted.links.size() == healthy.links.size());  // another spine, as short
  CHECK(std::none_of(rerouted.links.begin(), rerouted.links.end(),
                     [&](topologies::LinkId id) { return degradation.cables_down[static_cast<size_t>(id)]; }));
  CHECK(rerouted.links != healthy.links);
  // The simulator routes around it too: an all-to-all of the tree-lse plan still completes.
  const model::DecodeModel model(topology);
  sim::ReplayOptions options;
  options.degradation = degradation;
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::tree, mha16(), 1000000);
  CHECK(sim::replay_plan(model, plan, options).latency_s >= sim::replay_plan(model, plan).latency_s * (1 - 1e-12));
  // A GPU's own NIC cable has no alternative.
  sim::Degradation nic_down;
  const topologies::LinkId first = healthy.links.front();  // GPU 0 -> its NIC
  sim::take_down(topology, topology.device(topology.link(first).from).name,
                 topology.device(topology.link(first).to).name, nic_down);
  CHECK_THROWS_WITH_AS(topology.route(0, 9, &nic_down.cables_down), doctest::Contains("no alternative"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::take_down(topology, "spine0", "nowhere", nic_down),
                       doctest::Contains("no device named 'nowhere'"), std::invalid_argument);
}
