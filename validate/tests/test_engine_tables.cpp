// Engine measurements as tables (engine_tables.hpp, read through engine_runs.hpp): LMDeploy's profile_generation CSV
// and treering's table of published runs, and the memory check that keeps runs whose batch does not fit out of the
// predictions. The files under validate/tests/data/{lmdeploy,engine-table}/ hold made-up times in those formats.
#include <algorithm>
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "treering/model/statistics.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/engine_fit.hpp"
#include "treering/validate/engine_runs.hpp"

using namespace treering;

namespace {

std::string data(const std::string& name) { return std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/" + name; }

std::string refusal(const std::string& path) {
  try {
    validate::read_engine_runs(path);
  } catch (const topologies::InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("LMDeploy's profile_generation CSV: a run a row, the median token latency its quantity") {
  const std::string file = data("lmdeploy/profile-generation.csv");
  CHECK(validate::is_engine_benchmark_file(file));
  const std::vector<validate::EngineRun> runs = validate::read_engine_runs(file);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].engine == "lmdeploy");
  CHECK(runs[1].benchmark == "step");
  CHECK(runs[1].workload == "llama2-7b");
  CHECK(runs[1].batch == 16);
  CHECK(runs[1].input_len == 2048);
  CHECK(runs[1].output_len == 128);
  CHECK(runs[1].tp == 1);
  CHECK(runs[1].measured_s == doctest::Approx(0.0201).scale(1e-12));  // the 50%(s) column, not FTL nor 75%
  CHECK(runs[1].engine_steps() == 1);
  CHECK(runs[1].file.find("line 3") != std::string::npos);
}

TEST_CASE("LMDeploy's CSV without the model and tp columns it does not write is refused, saying what to add") {
  const std::string file = data("lmdeploy/profile-generation-no-tp.csv");
  CHECK(validate::is_engine_benchmark_file(file));
  const std::string why = refusal(file);
  CHECK(why.find("profile-generation-no-tp.csv:1") != std::string::npos);
  CHECK(why.find("add columns \"model\"") != std::string::npos);
}

TEST_CASE("treering's engine table: engine and version, latency or step, each row a run") {
  const std::string file = data("engine-table/table.csv");
  CHECK(validate::is_engine_benchmark_file(file));
  const std::vector<validate::EngineRun> runs = validate::read_engine_runs(file);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].engine == "vllm 0.6.1");
  CHECK(runs[0].benchmark == "latency");
  CHECK(runs[0].workload == "llama3-8b");
  CHECK(runs[0].engine_steps() == 512);  // a latency run: the prefill's step and 511 decode steps
  CHECK(runs[1].benchmark == "step");
  CHECK(runs[1].workload == "qwen2-72b");
  CHECK(runs[1].tp == 4);
  CHECK(refusal(data("engine-table/bad-quantity.csv")).find(":2") != std::string::npos);
  CHECK(refusal(data("engine-table/bad-quantity.csv")).find("quantity must be latency or step") != std::string::npos);
  CHECK(refusal(data("engine-table/short-row.csv")).find("expected 9 fields") != std::string::npos);
  CHECK_FALSE(validate::is_engine_benchmark_file(std::string(TREERING_SOURCE_DIR) + "/README.md"));
}

TEST_CASE("an engine table's prompts column: identical sequences of an MoE model read one token's experts") {
  const std::vector<validate::EngineRun> runs = validate::read_engine_runs(data("engine-table/prompts.csv"));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].identical_sequences);
  CHECK_FALSE(runs[1].identical_sequences);
  CHECK(refusal(data("engine-table/bad-prompts.csv")).find("prompts must be distinct or identical") !=
        std::string::npos);
  // Mixtral 8x7B at batch 64 on 4 A100s: distinct sequences touch 8 x (1 - 0.75^64) = 8.0 experts a layer, identical
  // ones the 2 of one token, so a step reads 32 layers x 6 x 176.2e6 = 33.8e9 fewer parameters (each expert 3 x
  // 4,096 x 14,336), 16.9 GB fewer bytes a GPU at fp16 over 4 GPUs: the identical run's step is shorter by at least
  // that at the A100 40GB's 1,555 GB/s peak, 10.9 ms.
  const topologies::ClusterSpec spec = topologies::load_cluster("polaris-a100");
  const validate::EnginePrediction same =
      validate::predict_engine_run(spec, topologies::default_impl_profile(), runs[0]);
  const validate::EnginePrediction apart =
      validate::predict_engine_run(spec, topologies::default_impl_profile(), runs[1]);
  CHECK(apart.step_s - same.step_s > 16.9e9 / 1.555e12);
}

TEST_CASE("a run whose batch's KV cache does not fit beside the weights is flagged, a small one is not") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-a100");  // 80 GB a GPU
  validate::EngineRun run;
  run.engine = "lmdeploy";
  run.benchmark = "step";
  run.workload = "llama2-7b";  // MHA: 2 x 32 heads x 128 x 2 B x 32 layers = 524,288 B of KV a token
  run.tp = 1;
  run.batch = 64;
  run.input_len = 2048;
  run.output_len = 2048;
  run.measured_s = 0.05;
  // 64 x 4,096 tokens x 524,288 B = 137.4 GB of KV alone, over 0.9 x 80 GB - 1 GB = 71 GB
  const std::string shortfall =
      validate::predict_engine_run(spec, topologies::default_impl_profile(), run).memory_shortfall;
  CHECK(shortfall.find("137.4 GB") != std::string::npos);
  CHECK(shortfall.find("71 GB") != std::string::npos);
  run.batch = 1;
  run.input_len = run.output_len = 128;  // 256 x 524,288 B = 0.13 GB beside 13.5 GB of weights
  CHECK(validate::predict_engine_run(spec, topologies::default_impl_profile(), run).memory_shortfall.empty());
}

namespace {

// The median |error| of `impl` on the runs of a committed engine table that fit in memory (and whose model does not
// contain any of `skip_models`).
double median_error_on(const std::string& table, const std::string& cluster, const std::string& impl,
                       const std::vector<std::string>& skip_models = {}) {
  const topologies::ClusterSpec spec = topologies::load_cluster(cluster);
  const topologies::ImplProfile profile = topologies::load_impl_profile(impl);
  std::vector<double> errors;
  for (const validate::EngineRun& run :
       validate::read_engine_runs(std::string(TREERING_SOURCE_DIR) + "/validate/data/engine-runs/" + table)) {
    const auto skipped = [&](const std::string& model) { return run.model.find(model) != std::string::npos; };
    if (std::any_of(skip_models.begin(), skip_models.end(), skipped)) continue;
    const validate::EnginePrediction p = validate::predict_engine_run(spec, profile, run);
    if (p.memory_shortfall.empty()) errors.push_back((p.predicted_s - run.measured_s) / run.measured_s);
  }
  return model::median_abs(errors);
}

}  // namespace

// The presets' engine work was fitted to the study's A100 (Polaris) runs; its H100 runs are a check they never saw.
// The goal for an uncalibrated engine profile: within 10 % median.
TEST_CASE("the vllm and trtllm presets, fitted on A100 runs, predict the same study's H100 runs within 10 %") {
  CHECK(median_error_on("llm-inference-bench-vllm-h100.csv", "dgx-h100", "vllm") < 0.10);
  CHECK(median_error_on("llm-inference-bench-trtllm-h100.csv", "dgx-h100", "trtllm") < 0.10);
  // without the engine's work the model misses them by far more (an engine adds its host's time to every step)
  CHECK(median_error_on("llm-inference-bench-vllm-h100.csv", "dgx-h100", "efficient") > 0.20);
}

// vllm-rocm was fitted to the MI300X table's Llama 2 and Mixtral runs; its other models are a check it never saw. The
// CUDA build's preset misses them by over a third (on the whole table 45.7 % median when measured); the GEMM term
// must take most of that.
TEST_CASE("the vllm-rocm preset predicts the MI300X runs of models it was not fitted on far closer than vllm's") {
  const std::vector<std::string> fitted = {"Llama-2", "Mixtral"};
  const double rocm = median_error_on("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm-rocm", fitted);
  const double cuda = median_error_on("llm-inference-bench-vllm-mi300x.csv", "mi300x", "vllm", fitted);
  CHECK(cuda > 0.35);
  CHECK(rocm < cuda / 2);
  CHECK(topologies::load_impl_profile("vllm-rocm").engine_step->gemm_flop_efficiency > 0);
}

TEST_CASE("each engine preset fitted to public runs names a table that is in validate/data/engine-runs") {
  for (const char* name : {"vllm", "vllm-rocm", "trtllm", "lmdeploy-turbomind"}) {
    CAPTURE(name);
    const topologies::ImplProfile profile = topologies::load_impl_profile(name);
    REQUIRE(profile.engine_step.has_value());
    const std::string& source = profile.engine_step->source;
    const auto at = source.find("validate/data/engine-runs/");
    REQUIRE(at != std::string::npos);
    const std::string table = source.substr(at, source.find(".csv", at) + 4 - at);
    CHECK(std::ifstream(std::string(TREERING_SOURCE_DIR) + "/" + table).good());
  }
  CHECK(topologies::load_impl_profile("sglang").engine_step->fixed_s == 0.0);  // host work hidden by overlap
}

TEST_CASE("trtllm-bench's report JSON: a closed loop at the mean concurrency, the mean TPOT its quantity") {
  const std::string file = data("trtllm/throughput-c32-streaming.json");
  CHECK(validate::is_engine_benchmark_file(file));
  const validate::EngineRun run = validate::read_engine_run(file);
  CHECK(run.engine == "trtllm 1.0.0");
  CHECK(run.benchmark == "serve");
  CHECK(run.workload == "llama3.1-8b");
  CHECK(run.batch == 32);  // avg_num_concurrent_requests 31.6, rounded
  CHECK(run.input_len == 1024);
  CHECK(run.output_len == 256);
  CHECK(run.tp == 1);
  CHECK(run.measured_s == doctest::Approx(15.1e-3).scale(1e-12));  // streaming_metrics.avg_tpot_ms
  CHECK(run.mean_ttft_s == doctest::Approx(190.5e-3).scale(1e-12));
  const std::string why = refusal(data("trtllm/throughput-no-streaming.json"));
  CHECK(why.find("no streaming_metrics") != std::string::npos);
  CHECK(why.find("--streaming") != std::string::npos);
}
