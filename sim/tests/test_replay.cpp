// Replaying plans: equal to the model where no link is shared, slower where links are shared, by as much
// as the sharing says.
#include <doctest/doctest.h>

#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

const model::Workload& mha16() { return model::find_workload("paper-mha16"); }

}  // namespace

TEST_CASE("ring in one DGX H100: no link shared, the replay equals the model") {
  // Each rank sends to the next through its own NVSwitch port and into the next rank's own port.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 8 * 64000);
  const double simulated = sim::replay_plan(model, plan).latency_s;
  CHECK(simulated == doctest::Approx(model.evaluate(plan).latency_s).epsilon(1e-9));
}

TEST_CASE("ring in a PCIe box without P2P: four transfers share each switch uplink, four times slower") {
  // rtx4090-pcie, one box: GPUs 0-3 under switch 0, 4-7 under switch 1, every transfer through the host.
  // The uplink of switch 0 carries the ring edges 0->1, 1->2, 2->3, 3->4 at once: 31.5 GB/s x 0.80 / 4 =
  // 6.3 GB/s each, where the model costs each edge alone at 25.2 GB/s. Blocks of 10,000 tokens x 8 KiB.
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 8 * 10000);
  const double block = 10000 * 8192.0;
  const double latency = 8.4e-6 + 5.7e-6;  // p2p Simple over PCIe: ring base + PCI step
  const model::ComputeRates& rates = model.rates(0);
  const double last_attention = rates.launch_s + (block + 4096 + 4096 + 64 + 2 * 4160) / rates.hbm_Bps;
  const double normalise = rates.launch_s + 4096 / rates.hbm_Bps;
  const double model_s = model.evaluate(plan).latency_s;
  CHECK(model_s == doctest::Approx(7 * (latency + block / 25.2e9) + last_attention + normalise).epsilon(1e-9));
  const double simulated = sim::replay_plan(model, plan).latency_s;
  CHECK(simulated == doctest::Approx(7 * (latency + block / 6.3e9) + last_attention + normalise).epsilon(1e-9));
  MESSAGE("PCIe ring: model " << model_s * 1e3 << " ms, simulated " << simulated * 1e3 << " ms ("
                              << simulated / model_s << "x: the shared uplinks)");
}

TEST_CASE("plans with collectives are refused until their decomposition exists") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  CHECK_THROWS_AS(sim::replay_plan(model, model.plan(DecodeAlgorithm::tree, mha16(), 1000)), std::invalid_argument);
  CHECK_NOTHROW(sim::replay_plan(model, model.plan(DecodeAlgorithm::tree_lse, mha16(), 1000)));
}

TEST_CASE("bytes per link of a replayed plan equal the model's volumes per tier") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  for (DecodeAlgorithm algorithm : {DecodeAlgorithm::ring, DecodeAlgorithm::tree_lse}) {
    const model::DecodePlan plan = model.plan(algorithm, mha16(), 16 * 1000 + 5);
    const sim::ReplayResult replay = sim::replay_plan(model, plan);
    const model::DecodeResult predicted = model.evaluate(plan);
    // Every byte a GPU sends leaves through its first link; those leaving into a NIC are the inter-node ones.
    double intra = 0, inter = 0;
    for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
      const topologies::Link& link = topology.link(id);
      if (topology.device(link.from).kind != topologies::DeviceKind::gpu) continue;
      (topology.device(link.to).kind == topologies::DeviceKind::nic ? inter : intra) += replay.link_bytes[id];
    }
    CAPTURE(model::to_string(algorithm));
    CHECK(intra == predicted.volume.intra_node);
    CHECK(inter == predicted.volume.inter_node);
  }
}

TEST_CASE("the replay's trace is Chrome-trace JSON with a track per GPU") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 8 * 1000);
  const sim::ReplayResult replay = sim::replay_plan(model, plan, true);
  const nlohmann::json trace = nlohmann::json::parse(sim::chrome_trace(plan, replay));
  int tracks = 0, sends = 0, computes = 0;
  std::map<int, double> track_end;  // spans on one GPU's track must not overlap (Perfetto nests "X" events)
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "M") ++tracks;
    if (event["ph"] == "b") ++sends;
    if (event["name"] == "compute") ++computes;
    if (event["ph"] != "X") continue;
    const double start = event["ts"].get<double>();
    const double end = start + event["dur"].get<double>();
    CHECK(end <= replay.latency_s * 1e6 + 1e-6);
    CHECK(start >= track_end[event["tid"].get<int>()] - 1e-6);
    track_end[event["tid"].get<int>()] = end;
  }
  CHECK(tracks == 8);
  CHECK(sends == 8 * 7);          // p - 1 blocks forwarded by each of 8 GPUs
  CHECK(computes == 8 * (8 + 1));  // 8 attentions (with their merges) and the final normalisation each
}
