// Every group of a layout replayed at once (sim/layout_replay.hpp), against answers derived by hand: groups that
// share a NIC share its bandwidth, a rail-optimised cluster keeps them apart, an oversubscribed spine slows the
// traffic that crosses it and leaves traffic inside a leaf alone; and the model (model/link_sharing.hpp) agrees.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "treering/model/layout_model.hpp"
#include "treering/sim/collective_replay.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// dgx-h100 with `nics` NICs a node, GPU g on NIC g mod nics.
topologies::Topology dgx_with_nics(int nodes, int nics) {
  std::vector<topologies::Setting> settings{{"nics.count", std::to_string(nics)}};
  for (int gpu = 0; gpu < 8; ++gpu)
    settings.push_back({"nics.gpu_to_nic." + std::to_string(gpu), std::to_string(gpu % nics)});
  return topologies::build_topology("dgx-h100", {nodes, std::nullopt, settings});
}

model::LayoutModel layout(const topologies::Topology& topology, int tp, int cp) {
  return model::LayoutModel(topology, model::place_layout(topology, {tp, cp}));
}

sim::LayoutReplay replay(const model::LayoutModel& layouts, model::DecodeAlgorithm algorithm, long long tokens,
                         sim::ReplayOptions options = {}) {
  return sim::replay_layout(layouts, algorithm, model::find_workload("paper-mha16"), tokens, {}, std::nullopt, options);
}

}  // namespace

TEST_CASE("k groups whose ring edges share one NIC: the transfer over it takes k times as long") {
  // tp 8 x cp 2 on 2 DGX H100, paper-mha16 (2 heads a GPU), 1M tokens: every CP pair swaps one block of 500,000
  // tokens x 2 heads x 128 x 2 B x (K, V) = 512 MB. With 8 NICs each pair has its own: 512 MB / (50 GB/s x 0.92)
  // = 11.13 ms. With one NIC a node, the 8 pairs' blocks cross it at once, 46 GB/s / 8 each: 89.04 ms. Everything
  // else (latency, attention) is the same, so the difference is 7 x 11.13 ms = 77.913 ms, in the simulator and
  // in the model alike.
  const topologies::Topology eight = dgx_with_nics(2, 8), one = dgx_with_nics(2, 1);
  const model::LayoutModel apart = layout(eight, 8, 2), shared = layout(one, 8, 2);
  const double alone_s = 512e6 / 46e9;
  const sim::LayoutReplay a = replay(apart, model::DecodeAlgorithm::ring, 1'000'000);
  const sim::LayoutReplay b = replay(shared, model::DecodeAlgorithm::ring, 1'000'000);
  CHECK(b.attention_s - a.attention_s == doctest::Approx(7 * alone_s).scale(1e-12).epsilon(1e-9));
  CHECK(b.replay.transfers_simulated == 16);  // every group replayed: they share the NIC
  const model::Workload workload = model::find_workload("paper-mha16");
  const double model_a = apart.attention(model::DecodeAlgorithm::ring, workload, 1'000'000).slowest.latency_s;
  const double model_b = shared.attention(model::DecodeAlgorithm::ring, workload, 1'000'000).slowest.latency_s;
  CHECK(model_b - model_a == doctest::Approx(7 * alone_s).scale(1e-12).epsilon(1e-9));
  CHECK(model_b == doctest::Approx(b.attention_s).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("a rail-optimised cluster keeps the groups apart: one replayed for all, the same as alone") {
  // tp 8 x cp 2 on 2 DGX H100: CP group t is GPU t of each node, on rail t's NIC and leaf: no link in common.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::LayoutModel layouts = layout(topology, 8, 2);
  for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree}) {
    CAPTURE(model::to_string(algorithm));
    const sim::LayoutReplay all = replay(layouts, algorithm, 1'000'000);
    REQUIRE(all.replay.groups == 8);
    CHECK(all.replay.groups_replayed == 1);
    sim::ReplayOptions every;
    every.one_of_identical = false;
    const sim::LayoutReplay each = replay(layouts, algorithm, 1'000'000, every);
    CHECK(each.replay.groups_replayed == 8);
    const model::DecodePlan plan = layouts.plan(0, algorithm, model::find_workload("paper-mha16"), 1'000'000);
    const double alone_s = sim::replay_plan(layouts.cp_model(0), plan).latency_s;
    CHECK(all.attention_s == alone_s);
    CHECK(each.attention_s == doctest::Approx(alone_s).scale(1e-12).epsilon(1e-12));
    REQUIRE(each.replay.rank_finish_s.size() == 16);
    REQUIRE(all.replay.rank_finish_s.size() == 16);
    for (size_t rank = 0; rank < 16; ++rank) {
      CHECK(all.replay.rank_finish_s[rank] ==
            doctest::Approx(each.replay.rank_finish_s[rank]).scale(1e-12).epsilon(1e-12));
    }
  }
}

TEST_CASE("an r:1 spine: traffic across leaves r times slower when the uplinks pace it, traffic inside a leaf alone") {
  // topologies/examples/h100-fat-tree.yaml: 16-port switches, 4 NICs a node (GPUs 0, 2, 4, 6 on NICs 0-3). At
  // 1:1 a leaf has 8 ports down (2 nodes) and 8 up; at 3:1, 12 down (3 nodes) and 4 up. The senders: GPUs 0, 2,
  // 4, 6 of the nodes under leaf 0, each on a NIC of its own, each sending 1 GB to its counterpart under leaf 1
  // (D-mod-k spreads the consecutive destination ports over the spines). At 1:1, 8 flows on 8 uplinks: each
  // NIC-bound, 1 GB / 46 GB/s = 21.74 ms. At 3:1, 12 flows on 4 uplinks of 46 GB/s: 3 on each, 15.33 GB/s, 65.22
  // ms. The same sends between two nodes of leaf 0 stay inside it: NIC-bound either way.
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml";
  auto transfer_s = [&](int ratio, int nodes_per_leaf, bool across) {
    const topologies::Topology topology = topologies::build_topology(
        file, {std::nullopt, std::nullopt, {{"network.oversubscription", std::to_string(ratio)}}});
    std::vector<int> gpus;
    const int senders = across ? nodes_per_leaf : 1, offset = across ? nodes_per_leaf : 1;
    for (int node = 0; node < senders; ++node) {
      for (int gpu : {0, 2, 4, 6}) gpus.push_back(8 * node + gpu);
    }
    const size_t count = gpus.size();
    for (size_t i = 0; i < count; ++i) gpus.push_back(gpus[i] + 8 * offset);
    const model::DecodeModel model(topology, gpus);
    model::DecodePlan plan = model.plan(model::DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 1000);
    model::Phase sends;
    sends.kind = model::PhaseKind::transfers;
    sends.label = "1 GB each";
    for (size_t i = 0; i < count; ++i) sends.sends.push_back({static_cast<int>(i), static_cast<int>(i + count), 1e9});
    plan.phases = {sends};
    const double latency_s = model.p2p(0, static_cast<int>(count)).at(1e9).latency_s;
    return sim::replay_plan(model, plan).latency_s - latency_s;
  };
  CHECK(transfer_s(1, 2, true) == doctest::Approx(1e9 / 46e9).scale(1e-12).epsilon(1e-9));
  CHECK(transfer_s(3, 3, true) == doctest::Approx(3 * 1e9 / 46e9).scale(1e-12).epsilon(1e-9));
  CHECK(transfer_s(1, 2, false) == doctest::Approx(1e9 / 46e9).scale(1e-12).epsilon(1e-9));
  CHECK(transfer_s(3, 3, false) == doctest::Approx(1e9 / 46e9).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("an all-to-all of 256 MB across the 16 nodes of a fat tree: slower at 3:1 than at 1:1, as the model is not") {
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml";
  double simulated_s[2], predicted_s[2];
  for (int i = 0; i < 2; ++i) {
    const topologies::Topology topology = topologies::build_topology(
        file, {std::nullopt, std::nullopt, {{"network.oversubscription", i == 0 ? "1" : "3"}}});
    const model::CommGroup group = model::describe_group(topology);
    model::CollectiveRequest request;
    request.op = model::CollectiveOp::alltoall;
    request.bytes = 256.0 * (1 << 20);
    const model::CollectiveEstimate estimate = model::estimate_collective(group, request);
    predicted_s[i] = estimate.chosen.time_s;
    simulated_s[i] = sim::simulate_collective(topology, group, request.op, request.bytes, estimate.chosen).time_s;
  }
  // At 1:1 the NICs pace it, each shared by two GPUs (the model counts that): the two engines agree.
  CHECK(simulated_s[0] == doctest::Approx(predicted_s[0]).scale(1e-12).epsilon(0.01));
  // At 3:1 the 4 uplinks of a leaf carry what its 12 NIC ports send to the other leaves: the simulator sees it.
  CHECK(predicted_s[1] == predicted_s[0]);
  CHECK(simulated_s[1] > 1.5 * simulated_s[0]);
}
