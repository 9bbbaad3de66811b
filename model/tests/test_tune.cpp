// model::tune: the strategies searched, those a cluster cannot run left out, fastest first.
#include <doctest/doctest.h>

#include <algorithm>

#include "treering/model/tune.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

TEST_CASE("rotated_gpus: every node's GPUs rotated so that the leader comes first") {
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {2, 4});  // 2 boxes of 4
  CHECK(model::rotated_gpus(topology, {}, 1) == std::vector<int>{1, 2, 3, 0, 5, 6, 7, 4});
  CHECK(model::rotated_gpus(topology, {}, 0) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(model::rotated_gpus(topology, {0, 1, 4, 5}, 1) == std::vector<int>{1, 0, 5, 4});  // two per node listed
}

TEST_CASE("tune: fastest first, never slower than the paper's tree, the paper's two tried first") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {4, {}});
  const std::vector<model::Strategy> tried = model::strategies_to_try(topology, {});
  REQUIRE(tried.size() >= 2);
  CHECK(tried[0].algorithm == DecodeAlgorithm::tree);
  CHECK(tried[1].algorithm == DecodeAlgorithm::ring);
  const auto tuned = model::tune(topology, model::find_workload("paper-mha16"), 1000000);
  REQUIRE(!tuned.empty());
  CHECK(std::is_sorted(tuned.begin(), tuned.end(),
                       [](const model::TunedStrategy& a, const model::TunedStrategy& b) { return a.result.latency_s < b.result.latency_s; }));
  const model::DecodeModel plain(topology);
  const double tree_s = plain.predict(DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 1000000).latency_s;
  CHECK(tuned.front().result.latency_s <= tree_s);
}

TEST_CASE("tune leaves out what the cluster cannot run: NVLS without in-switch reduction, recursive doubling on 24 GPUs") {
  // rtx4090-pcie: PCIe boxes, no NVSwitch. 3 boxes x 8 GPUs = 24 ranks, not a power of two.
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {3, {}});
  const auto tuned = model::tune(topology, model::find_workload("paper-mha16"), 100000);
  for (const model::TunedStrategy& t : tuned) {
    CAPTURE(t.strategy.describe());
    const auto forced = t.strategy.options.collective_algorithm;
    CHECK_FALSE((forced == model::CollectiveAlgorithm::nvls || forced == model::CollectiveAlgorithm::nvls_tree ||
                 forced == model::CollectiveAlgorithm::recursive_doubling));
  }
  CHECK(tuned.size() < model::strategies_to_try(topology, {}).size());
}

TEST_CASE("a strategy describes itself") {
  model::Strategy s{DecodeAlgorithm::tree_lse, {}, 3};
  s.options.tree_fan_in_domain = 0;
  s.options.tree_fan_in_network = 4;
  CHECK(s.describe() == "tree-lse, fan-in all in a node, 4 across, leader GPU 3");
  model::Strategy forced{DecodeAlgorithm::tree_fused, {}, 0};
  forced.options.collective_algorithm = model::CollectiveAlgorithm::nvls_tree;
  CHECK(forced.describe() == "tree-fused, every collective as nvls-tree");
}
