// Calibrating on the shipped nccl-tests data: the fit lowers the error, also on sizes it did not see; the
// calibrated file loads and replaces any earlier calibration.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "treering/topologies/load.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/model/statistics.hpp"

using namespace treering;

namespace {

using model::median_abs;

std::vector<double> errors(const std::vector<double>& predicted,
                           const std::vector<validate::CollectiveMeasurement>& measured) {
  std::vector<double> out;
  for (size_t i = 0; i < measured.size(); ++i) out.push_back((predicted[i] - measured[i].time_s) / measured[i].time_s);
  return out;
}

}  // namespace

TEST_CASE("calibrated on half of the sizes, the model predicts the other half better than uncalibrated") {
  const auto all = validate::read_collective_measurements(std::string(TREERING_SOURCE_DIR) +
                                                          "/validate/data/nccl-tests-allreduce-h100-2node-ndr.log");
  std::vector<validate::CollectiveMeasurement> train, test;
  for (size_t i = 0; i < all.size(); ++i)
    (i % 2 == 0 ? train : test).push_back(all[i]);  // 8 B, 32 B, ... | 16 B, 64 B, ...
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {2, std::nullopt});
  const validate::CalibrationFit fit = validate::calibrate_collectives(spec, train, {"train"}, "2026-11-21");
  CHECK(median_abs(fit.rel_errors_after) < median_abs(fit.rel_errors_before));
  topologies::ClusterSpec calibrated = spec;
  calibrated.calibration = fit.calibration;
  const double before = median_abs(errors(validate::predict_collectives(spec, test), test));
  const double after = median_abs(errors(validate::predict_collectives(calibrated, test), test));
  MESSAGE("held-out sizes: median |error| " << 100 * before << " % uncalibrated, " << 100 * after << " % calibrated");
  CHECK(after < before);
  CHECK(fit.calibration.provenance.r_squared.value() > 0.9);
  CHECK(fit.calibration.provenance.inputs == std::vector<std::string>{"train"});
}

TEST_CASE("the calibrated cluster file loads, with the old calibration section replaced") {
  topologies::Calibration c;
  c.provenance = {
      {"a.log"},         "2026-11-21", "treering calibrate", 0.99,        0.05, 0.2, std::pair{8.0, 1073741824.0},
      std::pair{16, 16}, std::nullopt, std::nullopt,         std::nullopt};
  c.collectives["tree"].base_latency_s = 9.5e-6;
  c.scale_out = topologies::TierCalibration{std::nullopt, 45e9};
  std::string base = topologies::cluster_presets().front().yaml_text;
  const std::string once = validate::with_calibration(base, c);
  c.collectives["tree"].base_latency_s = 11e-6;
  const std::string twice = validate::with_calibration(once, c);
  CHECK(twice.find("calibration:") == twice.rfind("calibration:"));  // one section
  const topologies::ClusterSpec spec = topologies::load_cluster_text(twice, "calibrated.yaml");
  REQUIRE(spec.calibration.has_value());
  CHECK(spec.calibration->collectives.at("tree").base_latency_s.value() == doctest::Approx(11e-6).scale(1e-12));
  CHECK(spec.calibration->scale_out->bandwidth_Bps == doctest::Approx(45e9).scale(1e-12));
  CHECK_FALSE(spec.calibration->scale_out->latency_s.has_value());
  // What the measurements covered comes back, and a prediction outside it says why.
  REQUIRE(spec.calibration->provenance.sizes_bytes.has_value());
  CHECK(spec.calibration->provenance.sizes_bytes->second == 1073741824.0);
  CHECK(validate::extrapolation(*spec.calibration, 1 << 20, 16).empty());
  CHECK(validate::extrapolation(*spec.calibration, 4.0, 16) == "4 B is outside the calibrated sizes 8-1073741824 B");
  CHECK(validate::extrapolation(*spec.calibration, 1 << 20, 64) == "64 ranks is outside the calibrated 16-16");
}

TEST_CASE("inside one node the fit takes the ring's base latency and the fabric's step latency and bus rate") {
  // Two ranks of one PCIe box, their rings timed as t = 0.5 us + S / 7 GB/s (what MPI on a CPU looks like):
  // the model's ring on 2 GPUs is base + 2 steps + S / bus (n = 2: 2 x 1/2 of S), so the fit can match it.
  std::vector<validate::CollectiveMeasurement> measured;
  for (double bytes = 8; bytes <= 4e6; bytes *= 4) {
    measured.push_back({model::CollectiveOp::allreduce, bytes, 2, 0.5e-6 + bytes / 7e9, "synthetic", 0,
                        model::CollectiveAlgorithm::ring});
  }
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(spec, {1, std::nullopt});
  const validate::CalibrationFit fit = validate::calibrate_collectives(spec, measured, {"synthetic"}, "2026-11-21");
  REQUIRE(fit.fitted.size() == 3);
  CHECK(fit.fitted[0].first == "ring base latency");
  CHECK(fit.fitted[1].first == "scale-up step latency");
  CHECK(fit.fitted[2].first == "scale-up bus bandwidth");
  MESSAGE("fitted: base " << fit.fitted[0].second * 1e6 << " us, step " << fit.fitted[1].second * 1e6 << " us, bus "
                          << fit.fitted[2].second / 1e9 << " GB/s; median |error| "
                          << 100 * median_abs(fit.rel_errors_after) << " %");
  // The rings were timed as 0.5 us + S / 7 GB/s, and the model's 2-rank ring is base + 2 steps + S / bus: the fit
  // gives back the rate, and the latencies add up to 0.5 us.
  CHECK(fit.fitted[2].second == doctest::Approx(7e9).scale(1e-12).epsilon(1e-3));
  CHECK(fit.fitted[0].second + 2 * fit.fitted[1].second == doctest::Approx(0.5e-6).scale(1e-12).epsilon(1e-2));
  CHECK(median_abs(fit.rel_errors_after) < 0.05);
  CHECK(median_abs(fit.rel_errors_after) < median_abs(fit.rel_errors_before));
}

TEST_CASE("compute: launch overhead and HBM efficiency from attention kernel times") {
  // Kernels timed as 2 us + bytes / 5 GB/s on an rtx4090-pcie (rated HBM 1,008 GB/s): efficiency 5 / 1008.
  // Bytes as the model counts them for paper-mha16 with fp32 partial states: tokens x 8 KiB + 4 KiB q
  // + 8 KiB o + 64 B lse.
  std::vector<validate::AttentionMeasurement> measured;
  for (long long tokens : {250LL, 1000LL, 4000LL, 16000LL}) {
    const double bytes = tokens * 8192.0 + 4096 + 8192 + 64;
    measured.push_back({"paper-mha16", tokens, 2e-6 + bytes / 5e9, "synthetic"});
  }
  const topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  const validate::ComputeFit fit = validate::fit_compute(spec, measured);
  const double rated = spec.gpu_models.at(spec.groups.front().gpu_model).hbm_bandwidth_Bps;
  CHECK(fit.launch_overhead_s == doctest::Approx(2e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.hbm_efficiency == doctest::Approx(5e9 / rated).scale(1e-12).epsilon(1e-6));
  CHECK(fit.median_abs_rel_error < 1e-9);
}

TEST_CASE("across two DGX H100 the fit takes in-switch reduction's rate from NVLS-tree's large all-reduces") {
  // Timings made by the model itself with the switch reducing at 240 GB/s (not the preset's 450 x 0.60 = 270):
  // from 32 MiB on NCCL picks NVLS-tree, whose rate on two nodes is the switch's (the NICs carry 8 x 46 GB/s).
  topologies::ClusterSpec truth = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(truth, {2, std::nullopt});
  truth.calibration = topologies::Calibration{};
  truth.calibration->in_switch_Bps = 240e9;
  std::vector<validate::CollectiveMeasurement> measured;
  for (double bytes = 8; bytes <= 4e9; bytes *= 4)
    measured.push_back({model::CollectiveOp::allreduce, bytes, 16, 0, "synthetic", 0, {}});
  const std::vector<double> times_s = validate::predict_collectives(truth, measured);
  for (size_t i = 0; i < measured.size(); ++i) measured[i].time_s = times_s[i];
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {2, std::nullopt});
  const validate::CalibrationFit fit = validate::calibrate_collectives(spec, measured, {"synthetic"}, "2026-11-26");
  REQUIRE(fit.calibration.in_switch_Bps.has_value());
  // Within 2 %: the five other parameters are free too, and NVLS-tree's pipeline fill trades a little with them.
  CHECK(*fit.calibration.in_switch_Bps == doctest::Approx(240e9).scale(1e-12).epsilon(0.02));
  // Not 0: a calibrated base latency is one figure for every protocol, where NCCL's defaults differ by protocol.
  CHECK(median_abs(fit.rel_errors_after) < 0.02);
  CHECK(fit.fitted.back().first == "in-switch bandwidth");
  // Written into the cluster file, it loads back.
  const std::string text = validate::with_calibration(topologies::cluster_presets().front().yaml_text, fit.calibration);
  const topologies::ClusterSpec loaded = topologies::load_cluster_text(text, "calibrated.yaml");
  CHECK(loaded.calibration->in_switch_Bps.value() ==
        doctest::Approx(*fit.calibration.in_switch_Bps).scale(1e-12).epsilon(1e-5));
}
