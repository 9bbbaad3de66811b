// Reading treering-realrun decode files and joining them with predictions.
#include <doctest/doctest.h>

#include <fstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/decodes.hpp"

using namespace treering;

TEST_CASE("a realrun decode file: its results, told apart from collective measurements") {
  const std::string dir = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data";
  CHECK(validate::is_decode_file(dir + "/realrun-decode.json"));
  CHECK_FALSE(validate::is_decode_file(dir + "/realrun-bench-allreduce.json"));
  CHECK_FALSE(validate::is_decode_file(std::string(TREERING_SOURCE_DIR) + "/validate/data/nccl-tests-allreduce-h100-2node-ndr.log"));
  const auto rows = validate::read_decode_measurements(dir + "/realrun-decode.json");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].algorithm == "ring");
  CHECK(rows[1].seq_len == 2000);
  CHECK(rows[1].ranks == 2);
  CHECK(rows[1].latency_s == 0.004);
  // Joined with the model on 2 GPUs of a DGX H100: error = predicted / measured - 1, per engine.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const auto cases = validate::predict_decodes(topology, rows, {validate::Engine::model});
  REQUIRE(cases.size() == 2);
  CHECK(cases[1].error(validate::Engine::model) == doctest::Approx(cases[1].predicted_s.at(validate::Engine::model) / 0.004 - 1));
  const auto summary = validate::summarise(cases, {validate::Engine::model});
  REQUIRE(summary.size() == 2);  // ring and tree, alphabetical
  CHECK(summary[0].operation == "ring");
  CHECK(summary[0].cases == 1);
}

TEST_CASE("broken decode files name what is missing or wrong") {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/broken-decode.json";
  std::ofstream(path) << R"({"results": [{"algo": "tree", "seq_len": 100, "ranks": 2, "workload": "paper-mha16", "batch": 1}]})";
  CHECK_THROWS_WITH_AS(validate::read_decode_measurements(path), doctest::Contains("missing 'latency_s'"), topologies::InputError);
  std::ofstream(path) << R"({"results": [{"algo": "tree", "seq_len": "long", "ranks": 2, "workload": "w", "batch": 1, "latency_s": {"median": 1}}]})";
  CHECK_THROWS_WITH_AS(validate::read_decode_measurements(path), doctest::Contains("wrong type"), topologies::InputError);
}
