// The public 2x RTX 4090 runs (validate/data/nccl-pcie): what the committed calibrated box says follows from them.
// Without peer access NCCL goes through host memory; the two hosts reach 2.24 and 3.87 GB/s of bus bandwidth at
// 2 GiB (their logs' last rows), far below the preset's PCIe links (25 GB/s between two cards).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "treering/model/statistics.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/calibrate.hpp"

using namespace treering;

namespace {

const std::string kDir = std::string(TREERING_SOURCE_DIR) + "/validate/data/nccl-pcie/";

std::vector<validate::CollectiveMeasurement> both_runs() {
  auto runs = validate::read_collective_measurements(kDir + "allreduce-rtx4090-2gpu-kalavai-docker.log");
  const auto pod = validate::read_collective_measurements(kDir + "allreduce-rtx4090-2gpu-kalavai-pod.log");
  runs.insert(runs.end(), pod.begin(), pod.end());
  return runs;
}

}  // namespace

TEST_CASE("the calibrated 2x RTX 4090 box runs between the two public hosts, and is what calibrate writes") {
  const auto runs = both_runs();
  REQUIRE(runs.size() == 58);  // 29 sizes, 8 B to 2 GiB, per run
  const topologies::ClusterSpec committed = topologies::load_cluster(kDir + "rtx4090-2gpu-kalavai.yaml");
  REQUIRE(committed.calibration);
  REQUIRE(committed.calibration->scale_up);
  const double committed_Bps = committed.calibration->scale_up->bandwidth_Bps;
  CHECK(committed_Bps > 2.24e9);  // the slower host's bus bandwidth at 2 GiB
  CHECK(committed_Bps < 3.87e9);  // the faster host's

  topologies::ClusterSpec preset = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(preset, {1, 2});
  const validate::CalibrationFit fit = validate::calibrate_collectives(preset, runs, {"both"}, "2026-11-27");
  REQUIRE(fit.calibration.scale_up);
  CHECK(fit.calibration.scale_up->bandwidth_Bps == doctest::Approx(committed_Bps).scale(1.0).epsilon(1e-3));
  // Calibrated, a 2 GiB all-reduce on two cards takes 2 GiB / bus bandwidth plus microseconds (two ranks: bus
  // bandwidth = algorithm bandwidth); uncalibrated the preset is over 5x faster than either host.
  std::vector<validate::CollectiveMeasurement> largest;
  for (const auto& m : runs) {
    if (m.bytes == 2147483648.0) largest.push_back(m);
  }
  REQUIRE(largest.size() == 2);
  for (double predicted_s : validate::predict_collectives(preset, largest)) CHECK(predicted_s < 2147483648.0 / 3.87e9 / 5);
  topologies::ClusterSpec calibrated = preset;
  calibrated.calibration = committed.calibration;
  for (double predicted_s : validate::predict_collectives(calibrated, largest)) {
    CHECK(predicted_s == doctest::Approx(2147483648.0 / committed_Bps).scale(1.0).epsilon(0.01));
  }
  CHECK(model::median_abs(fit.rel_errors_after) < model::median_abs(fit.rel_errors_before));
}

TEST_CASE("uncalibrated, a box whose GPUs meet in host memory carries the model's worst error on these runs") {
  const auto runs = both_runs();
  topologies::ClusterSpec preset = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(preset, {1, 2});
  const std::vector<double> predicted = validate::predict_collectives(preset, runs);
  double worst = 0;
  for (size_t i = 0; i < runs.size(); ++i) worst = std::max(worst, std::abs(predicted[i] - runs[i].time_s) / runs[i].time_s);
  CHECK(worst == doctest::Approx(1 - 0.6856 / 7.8433).scale(1.0).epsilon(0.002));  // 16 MiB, in-place 7.8433 ms
  CHECK(model::kHostStagedError == std::ceil(worst * 100) / 100);

  const topologies::ImplProfile& efficient = topologies::default_impl_profile();
  const model::RelativeErrors staged = model::prediction_errors(topologies::Topology(preset), efficient, false);
  CHECK(staged.communication == model::kHostStagedError);
  CHECK(staged.network_latency == model::kHostStagedError);
  CHECK(staged.compute == efficient.uncertainty.compute);
  CHECK(staged.host_staged);
  topologies::ClusterSpec one_per_box = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(one_per_box, {2, 1});  // nothing meets in host memory
  CHECK(model::prediction_errors(topologies::Topology(one_per_box), efficient, false).communication == efficient.uncertainty.communication);
  const topologies::ClusterSpec calibrated = topologies::load_cluster(kDir + "rtx4090-2gpu-kalavai.yaml");
  CHECK(model::prediction_errors(topologies::Topology(calibrated), efficient, false).communication ==
        calibrated.calibration->provenance.max_abs_rel_error.value());
}
