// treering calibrate and validate on a serving engine's benchmarks (vLLM latency JSON): runs made with a known engine
// work a step give it back, the fitted profile predicts them, and files without their settings are refused.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::read_file;
using treering::cli::testing::run_treering;

namespace {

const std::string kDir = std::string(TREERING_BINARY_DIR) + "/tests/";

// An engine of 0.4 ms + 25 us a sequence each step, over the efficient profile.
const char* kTruth = R"(name: truth-engine
description: "0.4 ms + 25 us a sequence each step"
implementation: "cli test"
engine_step: {fixed: 0.4ms, per_sequence: 25us, source: "test"}
uncertainty: {compute: 0.125, communication: 0.23, source: "test"}
)";

// A vLLM results file for `batch` with the settings written in, its one latency `latency_s`.
std::string vllm_file(int batch, double latency_s) {
  const std::string path = kDir + "vllm-latency-b" + std::to_string(batch) + ".json";
  nlohmann::json json{{"avg_latency", latency_s},
                      {"std_latency", 0.0},
                      {"latencies", {latency_s}},
                      {"percentiles", {{"50", latency_s}}},
                      {"batch_size", batch},
                      {"input_len", 512},
                      {"output_len", 64},
                      {"tensor_parallel_size", 1},
                      {"model", "meta-llama/Llama-3.1-8B"}};
  std::ofstream(path) << json.dump();
  return path;
}

}  // namespace

TEST_CASE("calibrate on vLLM latency runs gives back the engine work they were made with") {
  const std::string truth = kDir + "truth-engine.yaml";
  std::ofstream(truth) << kTruth;
  std::string files;
  for (int batch : {1, 8, 32}) {
    // The truth's prediction of the run, as measured.
    const auto predicted = run_treering("validate --cluster dgx-h100 --nodes 1 --impl " + truth + " " +
                                        vllm_file(batch, 1.0) + " --format json");
    REQUIRE(predicted.exit_code == 0);
    const double latency_s = nlohmann::json::parse(predicted.out)["runs"][0]["predicted"]["predicted_s"].get<double>();
    files += " " + vllm_file(batch, latency_s);
  }
  const std::string fitted = kDir + "engine-fitted.yaml";
  const auto calibrated =
      run_treering("calibrate" + files + " --cluster dgx-h100 --nodes 1 -o " + fitted + " --format json");
  REQUIRE(calibrated.exit_code == 0);
  const nlohmann::json fit = nlohmann::json::parse(calibrated.out);
  CHECK(fit["engine_step"]["fixed_s"].get<double>() == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  CHECK(fit["engine_step"]["per_sequence_s"].get<double>() == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit["summary"]["median_abs_rel_error_after"].get<double>() < 1e-6);
  CHECK(read_file(fitted).find("name: efficient-engine-fitted") != std::string::npos);
  const auto validated = run_treering("validate --cluster dgx-h100 --nodes 1 --impl " + fitted + files);
  CHECK(validated.exit_code == 0);
  CHECK(validated.out.find("median |error| 0.0 %") != std::string::npos);
}

TEST_CASE("an engine's benchmark without its settings, or mixed with other measurements, is refused") {
  const std::string bare = kDir + "vllm-latency-bare.json";
  std::ofstream(bare) << R"({"avg_latency": 1.0, "std_latency": 0.0, "latencies": [1.0], "percentiles": {"50": 1.0}})";
  const auto missing = run_treering("validate --cluster dgx-h100 --nodes 1 " + bare);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("vllm-latency-bare.json: error: the settings") != std::string::npos);
  const auto mixed = run_treering("calibrate " + bare +
                                  " validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100 -o " +
                                  kDir + "never-written.yaml");
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("in a run of their own") != std::string::npos);
  const auto impl_elsewhere = run_treering(
      "validate --cluster dgx-h100 --impl efficient validate/data/nccl-tests-allreduce-h100-2node-ndr.log");
  CHECK(impl_elsewhere.exit_code == 2);
  CHECK(impl_elsewhere.err.find("--impl is for serving engines' benchmarks") != std::string::npos);
}

TEST_CASE("predict and simulate add the profile's engine work once a step") {
  const std::string truth = kDir + "truth-engine-step.yaml";
  std::ofstream(truth) << kTruth;
  for (const char* command : {"predict", "simulate"}) {
    CAPTURE(command);
    auto step_of = [&](const std::string& impl) {
      const auto result = run_treering(std::string(command) +
                                       " --cluster dgx-h100 --nodes 1 --gpus 0 --workload llama3.1-8b --seq-len 4k "
                                       "--batch 16 --algo tree --scope step --format json --impl " +
                                       impl);
      REQUIRE(result.exit_code == 0);
      return nlohmann::json::parse(result.out)[0];
    };
    const nlohmann::json with = step_of(truth), without = step_of("efficient");
    // 0.4 ms + 16 x 25 us = 0.8 ms a step
    CHECK(with["step"]["breakdown"]["engine_s"].get<double>() == doctest::Approx(0.8e-3).scale(1e-12));
    CHECK(with["step_s"].get<double>() - without["step_s"].get<double>() ==
          doctest::Approx(0.8e-3).scale(1e-12).epsilon(1e-6));
  }
}

TEST_CASE("calibrate never writes over the settings file it read beside the results") {
  const std::string results = kDir + "vllm-keep.json", settings = kDir + "vllm-keep.pytorch.json";
  std::ofstream(results)
      << R"({"avg_latency": 1.0, "std_latency": 0.0, "latencies": [1.0], "percentiles": {"50": 1.0}})";
  const std::string record =
      R"([{"benchmark": {"name": "vLLM benchmark", "extra_info": {"args": {"batch_size": 4, "input_len": 64,)"
      R"( "output_len": 32, "tensor_parallel_size": 1, "model": "meta-llama/Llama-3.1-8B"}}},)"
      R"( "metric": {"name": "latency", "benchmark_values": [1.0]}}])";
  std::ofstream(settings) << record;
  const auto result = run_treering("calibrate " + results + " --cluster dgx-h100 --nodes 1 -o " + settings);
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("is also an input of this run") != std::string::npos);
  CHECK(read_file(settings) == record);
}
