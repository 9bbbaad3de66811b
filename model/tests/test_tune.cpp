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
  CHECK(std::is_sorted(tuned.begin(), tuned.end(), [](const model::TunedStrategy& a, const model::TunedStrategy& b) {
    return a.result.latency_s < b.result.latency_s;
  }));
  const model::DecodeModel plain(topology);
  const double tree_s = plain.predict(DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 1000000).latency_s;
  CHECK(tuned.front().result.latency_s <= tree_s);
}

TEST_CASE(
    "tune leaves out what the cluster cannot run: NVLS without in-switch reduction, recursive doubling on 24 GPUs") {
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

namespace {

model::TunedStrategy tuned_with(double compute_s, double intra_node_s, double inter_node_s) {
  model::TunedStrategy t;
  t.result.breakdown.compute_s = compute_s;
  t.result.breakdown.intra_node_s = intra_node_s;
  t.result.breakdown.inter_node_s = inter_node_s;
  t.result.latency_s = compute_s + intra_node_s + inter_node_s;
  return t;
}

}  // namespace

TEST_CASE("strategy_bands: each strategy's band, and whether it meets the best's") {
  // Both errors 10 %: a latency x lies in [x / 1.1, x / 0.9] however it splits. The best, 60 us of compute and
  // 40 us across nodes: [90.91, 111.11] us. 120 us inside nodes: [109.09, 133.33], low under 111.11: within.
  // 125 us of compute: [113.64, 138.89], low over 111.11: not within.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  topologies::ImplProfile profile;
  profile.uncertainty = {0.1, 0.1, 0.1, "test"};
  const auto bands = model::strategy_bands(
      topology, {tuned_with(60e-6, 0, 40e-6), tuned_with(0, 120e-6, 0), tuned_with(125e-6, 0, 0)}, profile);
  REQUIRE(bands.size() == 3);
  CHECK(bands[0].band.low_s == doctest::Approx(90.909e-6).scale(1e-12).epsilon(1e-4));
  CHECK(bands[0].band.high_s == doctest::Approx(111.111e-6).scale(1e-12).epsilon(1e-4));
  CHECK(bands[0].within_best_band);  // its own
  CHECK(bands[1].band.low_s == doctest::Approx(109.091e-6).scale(1e-12).epsilon(1e-4));
  CHECK(bands[1].within_best_band);
  CHECK(bands[2].band.low_s == doctest::Approx(113.636e-6).scale(1e-12).epsilon(1e-4));
  CHECK(bands[2].band.high_s == doctest::Approx(138.889e-6).scale(1e-12).epsilon(1e-4));
  CHECK_FALSE(bands[2].within_best_band);
  CHECK(bands[2].errors.compute == 0.1);
}

TEST_CASE("on a calibrated cluster a strategy that extrapolates gets twice the calibration's error") {
  // test_extrapolation.cpp's calibration of one PCIe node (sends of 8 B-16.78 MB, attention over 1k-4k tokens,
  // all-reduces of 8 B-4 MiB on 2 ranks, HBM efficiency fitted), largest |error| 20 %. On GPUs 0 and 1 at 8,000
  // tokens the ring's blocks are 4,000 x 8,192 B = 32.77 MB, beyond the sends measured: e = 0.4, [L / 1.4, L / 0.6].
  // The tree stays inside every range: e = 0.2, [L / 1.2, L / 0.8].
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  topologies::Calibration c;
  c.provenance.inputs = {"bench.json"};
  c.provenance.tokens = std::pair<long long, long long>{1000, 4000};
  c.provenance.p2p_sizes_bytes = std::pair{8.0, 16777216.0};
  c.provenance.sizes_bytes = std::pair{8.0, 4194304.0};
  c.provenance.ranks = std::pair{2, 2};
  c.provenance.max_abs_rel_error = 0.2;
  c.p2p_scale_up = {{0, 20e-6, 11e9}};
  c.scale_up = topologies::TierCalibration{std::nullopt, 10e9};
  c.hbm_efficiency = 0.5;
  spec.calibration = c;
  const topologies::Topology topology(spec);
  const auto tuned = model::tune(topology, model::find_workload("paper-mha16"), 8000, {0, 1});
  const auto bands = model::strategy_bands(topology, tuned, topologies::default_impl_profile());
  int checked = 0;
  for (size_t i = 0; i < tuned.size(); ++i) {
    const model::Strategy& s = tuned[i].strategy;
    if (s.options.collective_algorithm || s.leader != 0) continue;
    const double l = tuned[i].result.latency_s;
    if (s.algorithm == DecodeAlgorithm::ring) {
      CHECK(tuned[i].extrapolated);
      CHECK(bands[i].band.low_s == doctest::Approx(l / 1.4).scale(1e-12).epsilon(1e-12));
      CHECK(bands[i].band.high_s == doctest::Approx(l / 0.6).scale(1e-12).epsilon(1e-12));
      ++checked;
    } else if (s.algorithm == DecodeAlgorithm::tree) {
      CHECK_FALSE(tuned[i].extrapolated);
      CHECK(bands[i].band.low_s == doctest::Approx(l / 1.2).scale(1e-12).epsilon(1e-12));
      CHECK(bands[i].band.high_s == doctest::Approx(l / 0.8).scale(1e-12).epsilon(1e-12));
      ++checked;
    }
  }
  CHECK(checked == 2);
}
