// Reading treering-realrun decode files and joining them with predictions.
#include <doctest/doctest.h>

#include <fstream>

#include "treering/model/decode.hpp"
#include "treering/model/realrun_plans.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/decodes.hpp"

using namespace treering;

TEST_CASE("a realrun decode file: its results, told apart from collective measurements") {
  const std::string dir = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data";
  CHECK(validate::is_decode_file(dir + "/realrun-decode.json"));
  CHECK_FALSE(validate::is_decode_file(dir + "/realrun-bench-allreduce.json"));
  CHECK_FALSE(validate::is_decode_file(std::string(TREERING_SOURCE_DIR) +
                                       "/validate/data/nccl-tests-allreduce-h100-2node-ndr.log"));
  const auto rows = validate::read_decode_measurements(dir + "/realrun-decode.json");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].algorithm == "ring");
  CHECK(rows[1].seq_len == 2000);
  CHECK(rows[1].ranks == 2);
  CHECK(rows[1].latency_s == 0.004);
  // Joined with the model on 2 GPUs of a DGX H100: the prediction is the plan the cpu backend ran (2 ranks = GPUs
  // 0 and 1, the ring over 2,000 tokens of paper-mha16, realrun's plan options for cpu), made here directly, and
  // error = predicted / measured - 1.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const auto cases = validate::predict_decodes(topology, rows, {validate::Engine::model});
  REQUIRE(cases.size() == 2);
  const model::DecodeModel two_gpus(topology, {0, 1});
  const double expected_s = two_gpus
                                .predict(model::DecodeAlgorithm::ring, model::find_workload("paper-mha16"), 2000,
                                         model::realrun_plan_options(model::RealrunBackend::cpu))
                                .latency_s;
  CHECK(cases[1].predicted_s.at(validate::Engine::model) == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-12));
  CHECK(cases[1].error(validate::Engine::model) == doctest::Approx(expected_s / 0.004 - 1).scale(1e-12).epsilon(1e-12));
  const auto summary = validate::summarise(cases, {validate::Engine::model});
  REQUIRE(summary.size() == 2);  // ring and tree, alphabetical
  CHECK(summary[0].operation == "ring");
  CHECK(summary[0].cases == 1);
}

TEST_CASE("broken decode files name what is missing or wrong") {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/broken-decode.json";
  std::ofstream(path)
      << R"({"results": [{"algo": "tree", "seq_len": 100, "ranks": 2, "workload": "paper-mha16", "batch": 1}]})";
  CHECK_THROWS_WITH_AS(validate::read_decode_measurements(path), doctest::Contains("missing 'latency_s'"),
                       topologies::InputError);
  std::ofstream(path)
      << R"({"results": [{"algo": "tree", "seq_len": "long", "ranks": 2, "workload": "w", "batch": 1, "latency_s": {"median": 1}}]})";
  CHECK_THROWS_WITH_AS(validate::read_decode_measurements(path), doctest::Contains("wrong type"),
                       topologies::InputError);
}

TEST_CASE("a decode's noise: its repeats' spread, or the spread of the same case across files, the larger") {
  // realrun-decode.json: tree p10 1.9, p90 2.2 ms over a 2.0 ms median -> 15 %; ring 3.9 / 4.2 / 4.0 -> 7.5 %.
  // A second file measures the ring at 4.6 ms (no repeats listed): 4.0 and 4.6 spread over 0.6 / 4.3 = 13.95 %,
  // larger than 7.5 %, for both ring cases.
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/decode-again.json";
  std::ofstream(path)
      << R"({"results": [{"algo": "ring", "seq_len": 2000, "ranks": 2, "backend": "cpu", "workload": "paper-mha16",
                            "batch": 1, "latency_s": {"median": 0.0046}}]})";
  auto rows =
      validate::read_decode_measurements(std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/realrun-decode.json");
  CHECK(rows[0].spread.value() == doctest::Approx(0.15).scale(1e-12));
  const auto again = validate::read_decode_measurements(path);
  CHECK_FALSE(again[0].spread.has_value());
  rows.insert(rows.end(), again.begin(), again.end());
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const auto cases = validate::predict_decodes(topology, rows, {validate::Engine::model});
  REQUIRE(cases.size() == 3);
  CHECK(cases[0].noise == doctest::Approx(0.15).scale(1e-12));
  CHECK(cases[1].noise == doctest::Approx(0.6 / 4.3).scale(1e-12));
  CHECK(cases[2].noise == doctest::Approx(0.6 / 4.3).scale(1e-12));
  const auto summary = validate::summarise(cases, {validate::Engine::model});
  REQUIRE(summary.size() == 2);
  CHECK(summary[0].median_noise.value() == doctest::Approx(0.6 / 4.3).scale(1e-12));  // ring
  CHECK(summary[1].median_noise.value() == doctest::Approx(0.15).scale(1e-12));       // tree
}

TEST_CASE("a decode file without its backend is refused") {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/no-backend-decode.json";
  std::ofstream(path)
      << R"({"results": [{"algo": "tree", "seq_len": 100, "ranks": 2, "workload": "paper-mha16", "batch": 1,
                            "latency_s": {"median": 0.001}}]})";
  CHECK_THROWS_WITH_AS(validate::read_decode_measurements(path), doctest::Contains("missing 'backend'"),
                       topologies::InputError);
}
