// `treering validate` on the shipped nccl-tests data: both files, JSON keys, the --max-error exit, bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

namespace {
const std::string kLog = "validate/data/nccl-tests-allreduce-h100-2node-ndr.log";
const std::string kCsv = "validate/data/nccl-tests-allreduce-h100-2node-ndr.csv";
}  // namespace

TEST_CASE("validate: the dataset's 32 all-reduces against the model and the simulator, as JSON") {
  auto result = run_treering("validate --cluster dgx-h100 --nodes 2 " + kLog + " --engine model,sim --format json");
  REQUIRE(result.exit_code == 0);
  const auto json = nlohmann::json::parse(result.out);
  CHECK(json["cases"].size() == 32);
  REQUIRE(json["summary"].size() == 2);
  for (const auto& summary : json["summary"]) {
    CHECK(summary["cases"] == 32);
    CHECK(summary["median_abs_rel_error"].get<double>() > 0);
    CHECK(summary["p90_abs_rel_error"].get<double>() >= summary["median_abs_rel_error"].get<double>());
  }
  // The first case by hand: 8 B measured 24.70 us (in-place); the model's tree/LL 25.2 us plus 2 x 8 B on one
  // channel's share of LL's 39 GB/s cap (model/tests/test_collectives.cpp): +2.05 %.
  CHECK(json["cases"][0]["measured_s"].get<double>() == doctest::Approx(24.70e-6).scale(1e-12));
  CHECK(json["cases"][0]["rel_error"]["model"].get<double>() ==
        doctest::Approx((25.2e-6 + 16 / (39e9 / 16)) / 24.70e-6 - 1).scale(1e-12).epsilon(1e-6));
  // The CSV of the same figures gives the same table.
  auto csv = run_treering("validate --cluster dgx-h100 --nodes 2 " + kCsv + " --format json");
  REQUIRE(csv.exit_code == 0);
  CHECK(nlohmann::json::parse(csv.out)["summary"][0]["median_abs_rel_error"] ==
        json["summary"][0]["median_abs_rel_error"]);
}

TEST_CASE("validate --max-error: exit 1 over the bound; bad files and options exit 2 with the place") {
  // The model's median error on this dataset is 5.2 % (model/tests/test_collectives_dataset.cpp, README).
  CHECK(run_treering("validate --cluster dgx-h100 --nodes 2 " + kLog + " --max-error 0.03").exit_code == 1);
  CHECK(run_treering("validate --cluster dgx-h100 --nodes 2 " + kLog + " --max-error 0.1").exit_code == 0);
  auto bad = run_treering("validate --cluster dgx-h100 --nodes 2 validate/tests/bad-measurements/short-row.log");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("short-row.log:2: error: expected an nccl-tests row of 13 columns") != std::string::npos);
  CHECK(run_treering("validate --cluster dgx-h100 --nodes 2 " + kLog + " --engine oracle").exit_code == 2);
  auto small = run_treering("validate --cluster dgx-h100 --nodes 1 " + kLog);
  CHECK(small.exit_code == 2);
  CHECK(small.err.find("16 ranks, the cluster has 8 GPUs") != std::string::npos);
}

TEST_CASE("calibrate then validate: the issue's two commands, on the log and on the CSV") {
  const std::string out = std::string(TREERING_BINARY_DIR) + "/tests/cli-output/cal.yaml";
  auto fit = run_treering("calibrate " + kLog + " --cluster dgx-h100 --nodes 2 -o " + out);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.out.find("wrote") != std::string::npos);
  auto before = nlohmann::json::parse(run_treering("validate --cluster dgx-h100 " + kLog + " --format json").out);
  auto after = run_treering("validate --cluster " + out + " " + kLog + " --format json");
  REQUIRE(after.exit_code == 0);
  CHECK(nlohmann::json::parse(after.out)["summary"][0]["median_abs_rel_error"].get<double>() <
        before["summary"][0]["median_abs_rel_error"].get<double>());
  CHECK(run_treering("calibrate " + kCsv + " --cluster dgx-h100 --nodes 2 -o " + out).exit_code == 0);
  CHECK(run_treering("calibrate " + kLog + " --cluster dgx-h100 --nodes 2 -o /no/such/dir/cal.yaml").exit_code == 2);
}

TEST_CASE("after calibration the simulator still agrees with the model: calibrated rates are caps on flows") {
  // Alone on the network each collective's flows run at the model's rate: NCCL's protocol caps (LL 37.7 GB/s of
  // bus bandwidth after the fit), the tree correction and the channels used bound each flow's rate, they are
  // not a delay before flows at the links' full rate. So model and simulator give the same time to rounding,
  // before and after calibration (before this, the simulator was 28-36 % fast on the LL and LL128 sizes).
  const std::string out = std::string(TREERING_BINARY_DIR) + "/tests/cli-output/cal-sim.yaml";
  REQUIRE(run_treering("calibrate " + kLog + " --cluster dgx-h100 --nodes 2 -o " + out).exit_code == 0);
  for (const std::string cluster : {std::string("dgx-h100 --nodes 2"), out}) {
    auto result = run_treering("validate --cluster " + cluster + " " + kLog + " --engine model,sim --format json");
    REQUIRE(result.exit_code == 0);
    const auto json = nlohmann::json::parse(result.out);
    REQUIRE(json["cases"].size() == 32);
    for (const auto& c : json["cases"]) {
      CHECK(c["predicted_s"]["sim"].get<double>() ==
            doctest::Approx(c["predicted_s"]["model"].get<double>()).scale(1e-12).epsilon(1e-3));
    }
  }
}

TEST_CASE("validate: decodes on an uncalibrated preset say 'none', not 'inside' (nominal figures throughout)") {
  auto table = run_treering("validate --cluster rtx4090-pcie --nodes 1 validate/tests/data/realrun-decode.json");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("inside") == std::string::npos);
  CHECK(table.out.find("calibration") != std::string::npos);
  auto json =
      run_treering("validate --cluster rtx4090-pcie --nodes 1 validate/tests/data/realrun-decode.json --format json");
  REQUIRE(json.exit_code == 0);
  const auto parsed = nlohmann::json::parse(json.out);
  REQUIRE(parsed["cases"].size() > 0);
  for (const auto& row : parsed["cases"]) CHECK(row["calibration"] == "none");
}

TEST_CASE("validate: a decode run on the cpu backend against a GPU cluster never calibrated on it is warned of") {
  // realrun-decode.json ran 2 CPU processes (backend cpu); dgx-h100's figures are an H100's.
  auto result = run_treering("validate --cluster dgx-h100 --nodes 1 validate/tests/data/realrun-decode.json");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  CHECK(result.err.find("warning: validate/tests/data/realrun-decode.json ran on the cpu backend") !=
        std::string::npos);
  CHECK(result.err.find("H100-SXM5-80GB") != std::string::npos);
  // A GPU log has no backend to doubt.
  auto log =
      run_treering("validate --cluster dgx-h100 --nodes 2 validate/data/nccl-tests-allreduce-h100-2node-ndr.log");
  REQUIRE(log.exit_code == 0);
  CHECK(log.err.find("cpu backend") == std::string::npos);
}
