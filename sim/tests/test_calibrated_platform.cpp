// A calibrated cluster's tier bandwidths reach the simulator's links: the replay keeps equal to the model
// where nothing is shared, at the calibrated rates.
#include <doctest/doctest.h>

#include "treering/model/comm_group.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

// dgx-h100 with `nodes` nodes, one GPU pair calibrated at 300 GB/s (nominal 450 GB/s NVLink), one NIC at
// 30 GB/s (nominal 50 GB/s NDR); latencies left at their defaults.
topologies::Topology calibrated_dgx(int nodes) {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {nodes, {}});
  topologies::Calibration calibration;
  calibration.scale_up = topologies::TierCalibration{std::nullopt, 300e9};
  calibration.scale_out = topologies::TierCalibration{std::nullopt, 30e9};
  spec.calibration = calibration;
  return topologies::Topology(std::move(spec));
}

}  // namespace

TEST_CASE("link efficiencies: the defaults, or the calibrated rate over the nominal one") {
  const topologies::Topology plain = topologies::build_topology("dgx-h100", {2, {}});
  // Uncalibrated: NCCL's 8xH100 ring graph, 12 channels x 30 GB/s = 360 of the NVSwitch port's 450 GB/s -> 0.80;
  // ~46 GB/s achieved per 400 Gb/s NDR NIC (50 GB/s) in public nccl-tests runs -> 0.92.
  CHECK(model::link_efficiency(plain).scale_up == doctest::Approx(360.0 / 450.0).scale(1e-12));
  CHECK(model::link_efficiency(plain).scale_out == doctest::Approx(46.0 / 50.0).scale(1e-12));
  const topologies::Topology calibrated = calibrated_dgx(2);
  CHECK(model::link_efficiency(calibrated).scale_up == doctest::Approx(300.0 / 450.0).scale(1e-12));
  CHECK(model::link_efficiency(calibrated).scale_out == doctest::Approx(30.0 / 50.0).scale(1e-12));
  // rtx4090-pcie (no P2P: GPU to GPU through the host) calibrated at 7.1 GB/s. On 2 ranks both ring edges
  // cross switch 0's 31.5 GB/s uplink: 15.75 GB/s nominal -> 0.4508. On 8, four edges cross each uplink:
  // 7.875 GB/s -> 0.9016.
  topologies::ClusterSpec pcie = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(pcie, {1, {}});
  pcie.calibration = topologies::Calibration{};
  pcie.calibration->scale_up = topologies::TierCalibration{std::nullopt, 7.1e9};
  pcie.calibration->provenance.ranks = std::pair<int, int>{2, 2};
  CHECK(model::link_efficiency(topologies::Topology(pcie)).scale_up == doctest::Approx(7.1 / 15.75).scale(1e-12));
  pcie.calibration->provenance.ranks = std::pair<int, int>{2, 8};
  CHECK(model::link_efficiency(topologies::Topology(pcie)).scale_up == doctest::Approx(7.1 / 7.875).scale(1e-12));
}

TEST_CASE("ring on 2 GPUs of a calibrated PCIe box: the simulator's shared uplink gives the calibrated rate") {
  // Calibrated at 7.1 GB/s on 2 ranks: the model takes 7.1 GB/s per pair; the simulator's two flows share
  // the uplink at 31.5 x 0.4508 = 14.2 GB/s, 7.1 each. Both engines agree.
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, {}});
  spec.calibration = topologies::Calibration{};
  spec.calibration->scale_up = topologies::TierCalibration{std::nullopt, 7.1e9};
  spec.calibration->provenance.ranks = std::pair<int, int>{2, 2};
  const topologies::Topology topology(std::move(spec));
  const model::DecodeModel model(topology, {0, 1});
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 8000);
  CHECK(sim::replay_plan(model, plan).latency_s ==
        doctest::Approx(model.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("ring in one calibrated DGX H100: each block at the calibrated 300 GB/s, in model and simulator") {
  // 8 ranks, 64,000 tokens each: a block is 64,000 x 8 KiB (paper-mha16: K and V, 16 heads x 128 x 2 B) =
  // 524,288,000 B, 1.748 ms at 300 GB/s; a block's attention reads it at 3.35 TB/s x 0.80 in 0.196 ms, so the
  // 7 passes are transfer-bound: 7 x (11.8 us + 1.748 ms) + the last attention + the normalisation, where
  // 11.8 us = p2p Simple's ring base 8.4 us + NVLink step 3.4 us.
  const topologies::Topology topology = calibrated_dgx(1);
  const model::DecodeModel model(topology);
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 8 * 64000);
  const double block = 64000 * 8192.0;
  const model::ComputeRates& rates = model.rates(0);
  const double last_attention = rates.launch_s + (block + 4096 + 4096 + 64 + 2 * 4160) / rates.hbm_Bps;
  const double normalise = rates.launch_s + 4096 / rates.hbm_Bps;
  const double expected_s = 7 * (11.8e-6 + block / 300e9) + last_attention + normalise;
  CHECK(model.evaluate(plan).latency_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
  CHECK(sim::replay_plan(model, plan).latency_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
}

TEST_CASE("every algorithm on calibrated tiers: the simulator equals the model where nothing more is shared") {
  // The cases of test_replay.cpp's agreement test, calibrated: one node (scale-up only) and GPU 0 of 4 nodes
  // (one NIC each, scale-out only).
  struct Case {
    int nodes;
    std::vector<int> gpus;
  };
  for (const Case& c : {Case{1, {}}, Case{4, {0, 8, 16, 24}}}) {
    const topologies::Topology topology = calibrated_dgx(c.nodes);
    const model::DecodeModel model(topology, c.gpus);
    for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
      const model::DecodePlan plan = model.plan(algorithm, model::find_workload("paper-mha16"), 100000);
      CAPTURE(c.nodes);
      CAPTURE(std::string(model::to_string(algorithm)));
      CHECK(sim::replay_plan(model, plan).latency_s ==
            doctest::Approx(model.evaluate(plan).latency_s).scale(1e-12).epsilon(1e-9));
    }
  }
}
