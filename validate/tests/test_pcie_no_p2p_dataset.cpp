// The public 2x RTX 4090 runs (validate/data/nccl-pcie): what the committed calibrated box says follows from them.
// Without peer access NCCL goes through host memory; the two hosts reach 2.24 and 3.87 GB/s of bus bandwidth at
// 2 GiB (their logs' last rows), far below the preset's PCIe links (25 GB/s between two cards).
#include <doctest/doctest.h>

#include "treering/model/statistics.hpp"
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
