// treering plan on a calibrated cluster says which choices leave what the calibration measured.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "run_cli.hpp"

using nlohmann::json;
using treering::cli::testing::run_treering;

TEST_CASE("plan: a choice whose collectives run on rank counts the calibration never measured is marked") {
  // The public 2-node H100 all-reduce set measures 16 ranks only. On one node, TP 8's all-reduces run on 8 ranks
  // and TP 4 x CP 2's combine on 2: both outside; no attention kernel was timed either.
  const std::string cluster =
      (std::filesystem::temp_directory_path() / ("treering-plan-extrapolation-" + std::to_string(getpid()) + ".yaml"))
          .string();
  auto calibrated = run_treering(
      "calibrate --cluster dgx-h100 --nodes 2 validate/data/nccl-tests-allreduce-h100-2node-ndr.csv -o " + cluster);
  REQUIRE_MESSAGE(calibrated.exit_code == 0, calibrated.err);
  auto result = run_treering("plan --cluster " + cluster +
                             " --nodes 1 --workload llama3.1-8b --seq-len 32k --confirm 0 --format json");
  std::filesystem::remove(cluster);
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  bool saw_tp8 = false;
  const json plan = json::parse(result.out);
  REQUIRE(plan["ranked"].size() > 1);
  for (const json& choice : plan["ranked"]) {
    const std::string why = choice["extrapolation"].get<std::string>();
    CHECK(why.find("attention not calibrated") != std::string::npos);
    if (choice["tp"] == 8 && choice["cp"] == 1) {
      saw_tp8 = true;
      CHECK(why.find("collectives over 8 ranks outside the measured 16-16") != std::string::npos);
    }
  }
  CHECK(saw_tp8);
  auto table =
      run_treering("plan --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 32k --confirm 0 --format json");
  REQUIRE(table.exit_code == 0);
  const json nominal = json::parse(table.out);
  REQUIRE(nominal["ranked"].size() > 1);
  for (const json& choice : nominal["ranked"]) CHECK(choice["extrapolation"] == "");  // nominal: nothing listed
}
