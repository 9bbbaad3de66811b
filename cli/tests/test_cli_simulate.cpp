// `treering simulate` and `treering compare`.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("simulate --format json: the simulated latency beside the model's, bytes and utilisation per link") {
  auto result = run_treering("simulate --cluster dgx-h100 --nodes 1 --seq-len 64k --algo ring --format json");
  REQUIRE(result.exit_code == 0);
  auto row = nlohmann::json::parse(result.out)[0];
  // One node: no link shared, the replay equals the model.
  CHECK(row["latency_s"].get<double>() == doctest::Approx(row["model_latency_s"].get<double>()).epsilon(1e-9));
  // 8 GPUs, each sending 7 blocks of 8,000 tokens x 8 KiB through its NVSwitch port: 16 directed links used.
  REQUIRE(row["links"].size() == 16);
  CHECK(row["links"][0]["bytes"].get<double>() == 7 * 8000 * 8192.0);
  CHECK(row["links"][0]["utilisation"].get<double>() > 0);
  CHECK(row["links"][0]["utilisation"].get<double>() <= 1.0);
}

TEST_CASE("compare prints both and their difference; algorithms not yet replayed are refused") {
  auto table = run_treering("compare --cluster rtx4090-pcie --nodes 1 --seq-len 80k --algo ring");
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("+297.30 %") != std::string::npos);  // the shared PCIe uplinks (sim/tests/test_replay.cpp)
  auto tree = run_treering("compare --cluster dgx-h100 --nodes 1 --seq-len 80k --algo tree");
  CHECK(tree.exit_code == 2);
  CHECK(tree.err.find("cannot replay tree yet") != std::string::npos);
}

TEST_CASE("simulate --trace writes a trace a person can open") {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/cli-output/trace-test.json";
  auto result = run_treering("simulate --cluster dgx-h100 --nodes 2 --seq-len 1M --algo tree-lse --trace " + path);
  REQUIRE(result.exit_code == 0);
  std::ifstream in(path);
  auto trace = nlohmann::json::parse(in);
  CHECK(trace["traceEvents"].size() > 16);  // 16 GPU tracks and their spans
  CHECK(run_treering("simulate --cluster dgx-h100 --seq-len 1M,2M --algo ring --trace " + path).exit_code == 2);
}
