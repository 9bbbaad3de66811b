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
  CHECK(simulated == doctest::Approx(model.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
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
  CHECK(model_s ==
        doctest::Approx(7 * (latency + block / 25.2e9) + last_attention + normalise).scale(1e-12).epsilon(1e-9));
  const double simulated = sim::replay_plan(model, plan).latency_s;
  CHECK(simulated ==
        doctest::Approx(7 * (latency + block / 6.3e9) + last_attention + normalise).scale(1e-12).epsilon(1e-9));
  MESSAGE("PCIe ring: model " << model_s * 1e3 << " ms, simulated " << simulated * 1e3 << " ms (" << simulated / model_s
                              << "x: the shared uplinks)");
}

TEST_CASE("every algorithm equals the model where flows share no more than the model counts") {
  // One DGX H100: the small all-reduces and all-gathers run as rings (ring/LL wins at 64 B-4 KiB on 8 GPUs),
  // one flow per NVSwitch port; tree-lse's receivers take their senders' flows in turn on their own port.
  // GPU 0 of 4 and of 16 nodes: one GPU per node, each on its own NIC of rail 0; at 16 nodes the all-reduces
  // run as double binary trees whose busiest GPUs carry 4 flows of S/2 each: 2 S / NIC rate, the model's.
  struct Case {
    int nodes;
    std::vector<int> gpus;
  };
  for (const Case& c : {Case{1, {}}, Case{4, {0, 8, 16, 24}},
                        Case{16, {0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120}}}) {
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {c.nodes, {}});
    const model::DecodeModel model(topology, c.gpus);
    for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
      const model::DecodePlan plan = model.plan(algorithm, mha16(), 100000);
      CAPTURE(c.nodes);
      CAPTURE(std::string(model::to_string(algorithm)));
      CHECK(sim::replay_plan(model, plan).latency_s ==
            doctest::Approx(model.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
    }
  }
  // One MI300X box: a full xGMI mesh; its rings run as direct exchanges over every link, tree-lse's sends each
  // on a link of their own, as the model counts them.
  const topologies::Topology mesh = topologies::build_topology("mi300x", {1, {}});
  const model::DecodeModel on_mesh(mesh);
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const model::DecodePlan plan = on_mesh.plan(algorithm, mha16(), 100000);
    CAPTURE(std::string(model::to_string(algorithm)));
    CHECK(sim::replay_plan(on_mesh, plan).latency_s ==
          doctest::Approx(on_mesh.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
  }
  const topologies::Topology sixteen = topologies::build_topology("dgx-h100", {16, {}});
  const model::DecodeModel model(sixteen, {0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120});
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::tree, mha16(), 100000);
  CHECK(model.collective(plan.phases.at(1)).chosen.algorithm == model::CollectiveAlgorithm::tree);
}

TEST_CASE("tree in a PCIe box without P2P: the all-reduce rings share the switch uplinks, as the model counts") {
  // rtx4090-pcie, one box, batch 64 (the all-reduces move kilobytes): they run as rings whose edges 0->1 ...
  // 3->4 all cross switch 0's uplink (as the ring decode's do), each flow at 31.5 GB/s x 0.80 / 4 = 6.3 GB/s.
  // Unlike the ring decode's passes, the collective model's bus bandwidth already counts that sharing (it
  // routes the ring over the graph): model and simulator agree, at 6.3 GB/s per edge.
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {1, {}});
  const model::DecodeModel model(topology);
  CHECK(model.group().scale_up_bus_Bps == doctest::Approx(6.3e9).scale(1e-12));
  model::Workload workload = mha16();
  workload.batch = 64;
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::tree, workload, 80000);
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind == model::PhaseKind::collective) {
      CHECK(model.collective(phase).chosen.algorithm == model::CollectiveAlgorithm::ring);
    }
  }
  CHECK(sim::replay_plan(model, plan).latency_s ==
        doctest::Approx(model.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("tree-lse in one DGX H100: the root's port carries the 7 broadcasts at once, each on one NCCL channel") {
  // The broadcast of o (b x n_h x d_h x 2 B = 4 KiB at batch 1) from GPU 0 to the 7 others: all 7 leave by
  // GPU 0's one NVSwitch port (7 x 4096 B / 360 GB/s = 79.6 ns), but each runs on one NCCL channel (a part is at
  // least 64 KiB) at 15 GB/s: 4096 / 15e9 = 273 ns after the p2p latency, in model and simulator.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::tree_lse, mha16(), 80000);
  const model::DecodeResult predicted = model.evaluate(plan);
  const model::PhaseTime& broadcast = predicted.phases.back();
  CHECK(broadcast.time_s == doctest::Approx(model.p2p(0, 1).latency_s + 4096 / 15e9).scale(1e-12).epsilon(1e-9));
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(predicted.latency_s).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("bytes per link of a replayed plan equal the model's volumes per tier") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  model::Workload workload = mha16();
  workload.batch = 256;  // all-reduces of megabytes: ring and NVLS-tree across the two nodes
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const model::DecodePlan plan = model.plan(algorithm, workload, 16 * 1000 + 5);
    const sim::ReplayResult replay = sim::replay_plan(model, plan);
    const model::DecodeResult predicted = model.evaluate(plan);
    // Every byte a GPU sends leaves through its first link; those leaving into a NIC are the inter-node ones.
    double intra = 0, inter = 0;
    for (topologies::LinkId id = 0; id < topology.link_count(); ++id) {
      const topologies::Link& link = topology.link(id);
      if (topology.device(link.from).kind != topologies::DeviceKind::gpu) continue;
      (topology.device(link.to).kind == topologies::DeviceKind::nic ? inter : intra) += replay.link_bytes[id];
    }
    CAPTURE(std::string(model::to_string(algorithm)));
    CHECK(intra == doctest::Approx(predicted.volume.intra_node).scale(1e-12).epsilon(1e-12));
    CHECK(inter == doctest::Approx(predicted.volume.inter_node).scale(1e-12).epsilon(1e-12));
  }
}

TEST_CASE("the replay's trace is Chrome-trace JSON with a track per GPU") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), 8 * 1000);
  const sim::ReplayResult replay = sim::replay_plan(model, plan, {true, true});
  const nlohmann::json trace = nlohmann::json::parse(sim::chrome_trace(plan, replay));
  int tracks = 0, sends = 0, computes = 0;
  std::map<int, double> track_end;  // spans on one GPU's track must not overlap (Perfetto nests "X" events)
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "M") ++tracks;
    if (event["ph"] == "b") ++sends;
    if (event.value("cat", "") == "compute") ++computes;
    if (event["ph"] != "X") continue;
    const double start = event["ts"].get<double>();
    const double end = start + event["dur"].get<double>();
    CHECK(end <= replay.latency_s * 1e6 + 1e-6);
    CHECK(start >= track_end[event["tid"].get<int>()] - 1e-6);
    track_end[event["tid"].get<int>()] = end;
  }
  CHECK(tracks == 8);
  CHECK(sends == 8 * 7);           // p - 1 blocks forwarded by each of 8 GPUs
  CHECK(computes == 8 * (8 + 1));  // 8 attentions (with their merges) and the final normalisation each
}

TEST_CASE("the ring's steady state: skipping the repeated rounds gives the full replay's result") {
  // Equal blocks (every rank 1,000 or 2,000 tokens): rounds repeat once the ring settles; the replay goes
  // straight to the last round, in either engine. Checked against SimGrid replaying every round, on NVSwitch
  // nodes across a rail network and in PCIe boxes where ring edges share switch uplinks (contention in every
  // round).
  struct Case {
    const char* cluster;
    int nodes;
    long long tokens_per_gpu;
  };
  for (const Case& c : {Case{"dgx-h100", 4, 1000}, Case{"rtx4090-pcie", 2, 2000}, Case{"dgx-a100", 3, 1000}}) {
    const topologies::Topology topology = topologies::build_topology(c.cluster, {c.nodes, {}});
    const model::DecodeModel model(topology);
    const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), c.tokens_per_gpu * topology.gpu_count());
    const sim::ReplayResult full = sim::replay_plan(model, plan, {false, false, {}, true});  // SimGrid, every round
    for (bool in_simgrid : {true, false}) {  // skipping in SimGrid's network and in the event loop
      const sim::ReplayResult skipped = sim::replay_plan(model, plan, {false, true, {}, in_simgrid});
      CAPTURE(std::string(c.cluster));
      CAPTURE(in_simgrid);
      CHECK(skipped.transfers_simulated <= full.transfers_simulated);
      if (std::string(c.cluster) == "dgx-h100") CHECK(skipped.transfers_simulated < full.transfers_simulated);
      CHECK(skipped.latency_s == doctest::Approx(full.latency_s).scale(1e-12).epsilon(1e-12));
      // and the breakdown of the last rank: the skipped rounds counted as they would have run
      CHECK(skipped.critical.compute_s == doctest::Approx(full.critical.compute_s).scale(1e-12).epsilon(1e-9));
      CHECK(skipped.critical.send_s == doctest::Approx(full.critical.send_s).scale(1e-12).epsilon(1e-9));
      CHECK(skipped.critical.overlapped_s == doctest::Approx(full.critical.overlapped_s).scale(1e-12).epsilon(1e-9));
      CHECK(skipped.critical.wait_intra_s + skipped.critical.wait_inter_s ==
            doctest::Approx(full.critical.wait_intra_s + full.critical.wait_inter_s).scale(1e-12).epsilon(1e-9));
    }
  }
}

TEST_CASE("a tree's trace: each all-reduce a span named after its phase on every GPU, its flows as sends") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::tree, mha16(), 16 * 1000);
  const sim::ReplayResult replay = sim::replay_plan(model, plan, {true, true});
  const nlohmann::json trace = nlohmann::json::parse(sim::chrome_trace(plan, replay));
  std::map<std::string, int> collectives;  // phase -> GPUs that took part
  int sends = 0;
  std::map<int, double> track_end;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "b") ++sends;
    if (event["ph"] != "X") continue;
    if (event["cat"] == "collective") ++collectives[event["name"].get<std::string>()];
    const double start = event["ts"].get<double>();
    CHECK(start >= track_end[event["tid"].get<int>()] - 1e-6);  // one GPU's spans never overlap
    track_end[event["tid"].get<int>()] = start + event["dur"].get<double>();
  }
  // The tree's three all-reduces (max, numerators, denominators), each with all 16 GPUs.
  REQUIRE(collectives.size() == 3);
  for (const auto& [name, gpus] : collectives) CHECK(gpus == 16);
  int flows = 0;
  for (const model::Phase& phase : plan.phases) {
    if (phase.kind == model::PhaseKind::collective)
      flows += static_cast<int>(model.collective_schedule(phase).flows.size());
  }
  CHECK(sends == flows);
}

TEST_CASE("plans that do not fit the model are refused before simulating") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  const model::DecodeModel four(topology, {0, 1, 2, 3});
  CHECK_THROWS_AS(sim::replay_plan(model, four.plan(DecodeAlgorithm::ring, mha16(), 1000)), std::logic_error);
  model::DecodePlan plan = model.plan(DecodeAlgorithm::tree_lse, mha16(), 1000);
  for (model::Phase& phase : plan.phases) {
    if (phase.kind == model::PhaseKind::transfers) phase.sends.push_back({0, 8, 64});  // rank 8 of 8
  }
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, plan), doctest::Contains("to rank 8 (of 8)"), std::logic_error);
  model::DecodePlan to_itself = model.plan(DecodeAlgorithm::tree_lse, mha16(), 1000);
  for (model::Phase& phase : to_itself.phases) {
    if (phase.kind == model::PhaseKind::transfers) phase.sends.push_back({3, 3, 64});  // no route: SimGrid aborts
  }
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, to_itself), doctest::Contains("sends from rank 3 to itself"),
                       std::logic_error);
  // A link that never delivers, or a GPU whose kernels take no time, in a what-if: refused, not a hang.
  sim::ReplayOptions dead_link;
  dead_link.degradation.link_bandwidth_factor[0] = 0;
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, model.plan(DecodeAlgorithm::tree, mha16(), 1000), dead_link),
                       doctest::Contains("factor in (0, 1]"), std::invalid_argument);
  sim::ReplayOptions frozen_gpu;
  frozen_gpu.degradation.gpu_slowdown[2] = 0;
  CHECK_THROWS_WITH_AS(sim::replay_plan(model, model.plan(DecodeAlgorithm::tree, mha16(), 1000), frozen_gpu),
                       doctest::Contains("GPU 2 slowed by a factor of 0"), std::invalid_argument);
}

TEST_CASE("the trace keeps a phase's label whole: quotes, backslashes, any length") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology);
  model::DecodePlan plan = model.plan(DecodeAlgorithm::tree, mha16(), 8 * 1000);
  const std::string label =
      "all-reduce \"max\" of lse \\ with a label longer than eighty characters, as a user's own plan may name it";
  for (model::Phase& phase : plan.phases) phase.label = label;
  const sim::ReplayResult replay = sim::replay_plan(model, plan, {true, true});
  const nlohmann::json trace = nlohmann::json::parse(sim::chrome_trace(plan, replay));
  int labelled = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["cat"] == "compute")
      labelled += event["name"] == label && event["args"]["phase"] == label;
  }
  CHECK(labelled > 0);
}
