// The public 2x RTX 4090 runs (validate/data/nccl-pcie): what the committed calibrated box says follows from them.
// Without peer access NCCL goes through host memory; the two pairs of cards reach 2.24 and 3.87 GB/s of bus bandwidth
// at 2 GiB (their logs' last rows), far below the preset's PCIe links (25 GB/s between two cards).
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

TEST_CASE("the calibrated 2x RTX 4090 box runs between the two public pairs, and is what calibrate writes") {
  const auto runs = both_runs();
  REQUIRE(runs.size() == 58);  // 29 sizes, 8 B to 2 GiB, per run
  const topologies::ClusterSpec committed = topologies::load_cluster(kDir + "rtx4090-2gpu-kalavai.yaml");
  REQUIRE(committed.calibration);
  REQUIRE(committed.calibration->scale_up);
  const double committed_Bps = committed.calibration->scale_up->bandwidth_Bps;
  CHECK(committed_Bps > 2.24e9);  // the slower pair's bus bandwidth at 2 GiB
  CHECK(committed_Bps < 3.87e9);  // the faster pair's

  topologies::ClusterSpec preset = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(preset, {1, 2});
  const validate::CalibrationFit fit = validate::calibrate_collectives(preset, runs, {"both"}, "2026-11-27");
  REQUIRE(fit.calibration.scale_up);
  CHECK(fit.calibration.scale_up->bandwidth_Bps == doctest::Approx(committed_Bps).scale(1.0).epsilon(1e-3));
  // Calibrated, a 2 GiB all-reduce on two cards takes 2 GiB / bus bandwidth plus microseconds (two ranks: bus
  // bandwidth = algorithm bandwidth); uncalibrated the preset is over 5x faster than either pair.
  std::vector<validate::CollectiveMeasurement> largest;
  for (const auto& m : runs) {
    if (m.bytes == 2147483648.0) largest.push_back(m);
  }
  REQUIRE(largest.size() == 2);
  for (double predicted_s : validate::predict_collectives(preset, largest))
    CHECK(predicted_s < 2147483648.0 / 3.87e9 / 5);
  topologies::ClusterSpec calibrated = preset;
  calibrated.calibration = committed.calibration;
  for (double predicted_s : validate::predict_collectives(calibrated, largest)) {
    CHECK(predicted_s == doctest::Approx(2147483648.0 / committed_Bps).scale(1.0).epsilon(0.01));
  }
  CHECK(model::median_abs(fit.rel_errors_after) < model::median_abs(fit.rel_errors_before));
}

TEST_CASE("uncalibrated, a box whose GPUs meet in host memory carries the model's worst error on these runs") {
  double worst = 0;
  for (int cards : {2, 4}) {
    for (const char* run : {"docker", "pod"}) {
      const auto measured = validate::read_collective_measurements(kDir + "allreduce-rtx4090-" + std::to_string(cards) +
                                                                   "gpu-kalavai-" + run + ".log");
      topologies::ClusterSpec preset = topologies::load_cluster("rtx4090-pcie");
      topologies::apply_overrides(preset, {1, cards});
      const std::vector<double> predicted = validate::predict_collectives(preset, measured);
      for (size_t i = 0; i < measured.size(); ++i) {
        worst = std::max(worst, std::abs(predicted[i] - measured[i].time_s) / measured[i].time_s);
      }
    }
  }
  // By hand: the worst is 16 MiB on the 0x1a-0x1b pair, 7.8433 ms measured (in-place). Two cards under one switch,
  // without P2P, run a ring at the preset's PCIe link rate x kScaleUpEfficiency = 31.5 x 0.8 = 25.2 GB/s: two ranks
  // move 16 MiB each way, 16.78e6 / 25.2e9 = 0.666 ms, plus at most ~20 us of NCCL's latency.
  CHECK(worst > 1 - 0.686 / 7.8433);
  CHECK(worst < 1 - 0.666 / 7.8433);
  CHECK(model::kHostStagedError == std::ceil(worst * 100) / 100);

  topologies::ClusterSpec preset = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(preset, {1, 2});
  const topologies::ImplProfile& efficient = topologies::default_impl_profile();
  const model::RelativeErrors staged = model::prediction_errors(topologies::Topology(preset), efficient, false);
  CHECK(staged.communication == model::kHostStagedError);
  CHECK(staged.network_latency == model::kHostStagedError);
  CHECK(staged.compute == efficient.uncertainty.compute);
  CHECK(staged.host_staged);
  topologies::ClusterSpec one_per_box = topologies::load_cluster("rtx4090-pcie");
  topologies::apply_overrides(one_per_box, {2, 1});  // nothing meets in host memory
  CHECK(model::prediction_errors(topologies::Topology(one_per_box), efficient, false).communication ==
        efficient.uncertainty.communication);
  const topologies::ClusterSpec calibrated = topologies::load_cluster(kDir + "rtx4090-2gpu-kalavai.yaml");
  const model::RelativeErrors measured_errors =
      model::prediction_errors(topologies::Topology(calibrated), efficient, false);
  CHECK(measured_errors.communication == calibrated.calibration->provenance.max_abs_rel_error.value());
  CHECK_FALSE(measured_errors.host_staged);
  // A calibration of the attention alone leaves communication at the host-memory error, and says so.
  topologies::ClusterSpec attention_only = preset;
  attention_only.calibration = topologies::Calibration{};
  attention_only.calibration->provenance.attention_max_abs_rel_error = 0.05;
  const model::RelativeErrors attention =
      model::prediction_errors(topologies::Topology(attention_only), efficient, false);
  CHECK(attention.compute == 0.05);
  CHECK(attention.communication == model::kHostStagedError);
  CHECK(attention.host_staged);
  CHECK(attention.source.find("host memory") != std::string::npos);
}
