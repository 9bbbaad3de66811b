// Serving engines' latency benchmarks (engine_runs.hpp, engine_fit.hpp): vLLM's files read with their settings,
// the run predicted like for like, and the engine's work per step fitted. The files under
// validate/tests/data/vllm/ are written in vLLM's format (vllm/benchmarks/latency.py) with made-up times: they
// test the reader, not the model.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "treering/model/statistics.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/engine_fit.hpp"
#include "treering/validate/engine_runs.hpp"

using namespace treering;

namespace {

std::string data(const std::string& name) {
  return std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/vllm/" + name;
}

std::string refusal(const std::string& path) {
  try {
    validate::read_engine_run(path);
  } catch (const topologies::InputError& error) {
    return error.what();
  }
  return "";
}

// Runs at batch 1, 8 and 32 of latency-b8.json's lengths whose times are the model's without engine work plus
// 128 steps x (0.4 ms + 25 us x batch).
std::vector<validate::EngineRun> runs_with_engine_work(const topologies::ClusterSpec& spec,
                                                       const topologies::ImplProfile& bare) {
  std::vector<validate::EngineRun> runs;
  for (int batch : {1, 8, 32}) {
    validate::EngineRun run = validate::read_engine_run(data("latency-b8.json"));
    run.batch = batch;
    run.measured_s = validate::predict_engine_run(spec, bare, run).predicted_s + 128 * (0.4e-3 + 25e-6 * batch);
    runs.push_back(run);
  }
  return runs;
}

}  // namespace

TEST_CASE("vLLM's latency results take their settings from the .pytorch.json beside them") {
  CHECK(validate::is_engine_benchmark_file(data("latency-b8.json")));
  CHECK(validate::is_engine_benchmark_file(data("latency-b8.pytorch.json")));
  CHECK_FALSE(
      validate::is_engine_benchmark_file(std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/realrun-step.json"));
  const validate::EngineRun run = validate::read_engine_run(data("latency-b8.json"));
  CHECK(run.workload == "llama3.1-8b");
  CHECK(run.batch == 8);
  CHECK(run.input_len == 32);
  CHECK(run.output_len == 128);
  CHECK(run.tp == 1);
  CHECK(run.latencies_s.size() == 5u);
  CHECK(run.measured_s == 0.8419);  // the median of 0.8401, 0.8418, 0.8419, 0.8432, 0.8455
  const validate::EngineRun record = validate::read_engine_run(data("latency-b8.pytorch.json"));
  CHECK(record.batch == 8);
  CHECK(record.measured_s == 0.8419);
}

TEST_CASE("a latency file without its settings, or with settings the model cannot predict, is refused") {
  const std::string missing = refusal(data("latency-no-settings.json"));
  CHECK(missing.find("latency-no-settings.json") != std::string::npos);
  CHECK(missing.find("settings (batch_size, input_len, output_len, tensor_parallel_size, model) are missing") !=
        std::string::npos);
  CHECK(refusal(data("latency-n2-settings-inline.json")).find("only n = 1 is predicted") != std::string::npos);
}

TEST_CASE("Hugging Face model ids name the workload presets") {
  CHECK(validate::workload_for_model("meta-llama/Llama-3.1-8B-Instruct") == "llama3.1-8b");
  CHECK(validate::workload_for_model("meta-llama/Meta-Llama-3.1-70B-Instruct") == "llama3.1-70b");
  CHECK(validate::workload_for_model("meta-llama/Llama-3.1-405B-Instruct-FP8") == "llama3.1-405b-fp8");
  CHECK(validate::workload_for_model("/models/Llama-3.2-1B") == "llama3.2-1b");
  CHECK(validate::workload_for_model("deepseek-ai/DeepSeek-V3") == "deepseek-v3");
  // a release after the size is dropped, not a version in the name
  CHECK(validate::workload_for_model("mistralai/Mistral-7B-v0.1") == "mistral-7b");
  CHECK(validate::workload_for_model("mistralai/Mixtral-8x7B-v0.1") == "mixtral-8x7b");
  CHECK(validate::workload_for_model("meta-llama/Meta-Llama-3-8B") == "llama3-8b");
  CHECK(validate::workload_for_model("meta-llama/Llama-2-70b-hf") == "llama2-70b");
  CHECK(validate::workload_for_model("Qwen/Qwen2-72B") == "qwen2-72b");
  CHECK(validate::workload_for_model("google/gemma-2-9b") == "");
}

TEST_CASE("the engine's work per step adds output_len x (fixed + per sequence x batch) to a latency run") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  validate::EngineRun run = validate::read_engine_run(data("latency-b8.json"));
  topologies::ImplProfile bare = topologies::default_impl_profile();
  topologies::ImplProfile engine = bare;
  engine.engine_step = topologies::EngineStep{1e-3, 10e-6, 0.0, "test", std::nullopt, 0.0, 0.0};
  const validate::EnginePrediction without = validate::predict_engine_run(spec, bare, run);
  const validate::EnginePrediction with = validate::predict_engine_run(spec, engine, run);
  // 128 steps (the prefill's and 127 decode steps) of 1 ms + 8 x 10 us = 1.08 ms: 138.24 ms.
  CHECK(with.predicted_s - without.predicted_s == doctest::Approx(128 * 1.08e-3).scale(1e-12));
  CHECK(with.decode_steps == 127);
  CHECK(with.middle_context == 32 + 64);
  CHECK(with.engine_step_s == doctest::Approx(1.08e-3).scale(1e-12));
  // The prefill of 8 x 32 tokens: 2 x 8.03e9 x 256 = 4.1 TFLOP over 989 TFLOP/s x 0.5 = 8.3 ms, longer than the
  // weights' 16 GB at the H100's effective rate (~6 ms): compute-bound.
  CHECK(without.prefill_s > 8.0e-3);
  CHECK(without.prefill_s < 8.6e-3);
}

TEST_CASE("the engine's fixed and per-sequence work come back from runs made with them") {
  // Runs at batch 1, 8 and 32 whose times are the model's without engine work plus 128 x (0.4 ms + 25 us x
  // batch): the fit finds 0.4 ms and 25 us, and every run's error after it is 0.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  const std::vector<validate::EngineRun> runs = runs_with_engine_work(spec, bare);
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, bare, runs);
  CHECK(fit.per_sequence_fitted);
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12));
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
  for (double e : fit.errors_before) CHECK(e < 0);  // without the engine the model is short of every run
}

namespace {

// 12 runs (TP 1 and 2, batch 1-64) whose times are the model's without engine work plus 128 x (0.4 ms + 25 us x
// batch) and 127 decode steps x the step's GEMM FLOPs at the peak over `efficiency` (0: none).
std::vector<validate::EngineRun> runs_of_two_tps(const topologies::ClusterSpec& spec, double efficiency) {
  std::vector<validate::EngineRun> runs;
  for (int tp : {1, 2}) {
    for (int batch : {1, 4, 8, 16, 32, 64}) {
      validate::EngineRun run = validate::read_engine_run(data("latency-b8.json"));
      run.batch = batch, run.tp = tp;
      const validate::EnginePrediction p = validate::predict_engine_run(spec, topologies::default_impl_profile(), run);
      const double gemm_s = efficiency > 0 ? 127 * p.gemm_flops_at_peak_s / efficiency : 0.0;
      run.measured_s = p.predicted_s + 128 * (0.4e-3 + 25e-6 * batch) + gemm_s;
      runs.push_back(run);
    }
  }
  return runs;
}

}  // namespace

TEST_CASE("the engine's GEMM FLOP efficiency comes back from runs of several TP degrees made with it") {
  // At 5 % of the peak the three come back, errors 0. TP 2 halves a GPU's GEMM FLOPs a sequence, so the GEMM term is
  // not the per-sequence one scaled.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  const std::vector<validate::EngineRun> runs = runs_of_two_tps(spec, 0.05);
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, bare, runs);
  CHECK(fit.gemm_fitted);
  CHECK(fit.step.gemm_flop_efficiency == doctest::Approx(0.05).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
  // Runs of one model at one TP: the GEMM FLOPs a sequence are the same in all, the term is not fitted.
  const std::vector<validate::EngineRun> one_tp(runs.begin(), runs.begin() + 6);
  CHECK_FALSE(validate::fit_engine_step(spec, bare, one_tp).gemm_fitted);
  // Without GEMM work the subset without the GEMM column is the best: fixed and per sequence alone, errors 0.
  const validate::EngineStepFit plain = validate::fit_engine_step(spec, bare, runs_of_two_tps(spec, 0.0));
  CHECK_FALSE(plain.gemm_fitted);
  CHECK(plain.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  for (double e : plain.errors_after) CHECK(std::fabs(e) < 1e-9);
}

TEST_CASE("a GEMM term faster than the GPU's peak is dropped, and a prior's GEMM term kept below 10 runs") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  // GEMM FLOPs at 2x the peak (efficiency 2): not a rate a GEMM reaches, the term is dropped, the other two refitted.
  const validate::EngineStepFit over = validate::fit_engine_step(spec, bare, runs_of_two_tps(spec, 2.0));
  CHECK_FALSE(over.gemm_fitted);
  CHECK(over.step.gemm_flop_efficiency == 0.0);
  CHECK(over.step.fixed_s > 0.0);
  // Three runs made at 5 % from a prior holding 5 % and no slope per sequence: the GEMM term is kept, the fixed work
  // fitted takes the rest, 0.4 ms + 25 us x batch read as fixed: not exact (the batch varies), but the term stays.
  topologies::ImplProfile prior = bare;
  prior.engine_step = topologies::EngineStep{1e-3, 0.0, 0.05, "prior", std::nullopt, 0.0, 0.0};
  const std::vector<validate::EngineRun> runs = runs_of_two_tps(spec, 0.05);
  const validate::EngineStepFit kept = validate::fit_engine_step(spec, prior, {runs[0], runs[1], runs[2]});
  CHECK(kept.per_sequence_from_prior);
  CHECK(kept.step.gemm_flop_efficiency == 0.05);
  CHECK(kept.step.per_sequence_s == 0.0);
  CHECK(kept.step.fixed_s > 0.4e-3);  // 25 us x batches 1-8 folded into it
  CHECK(kept.step.fixed_s < 0.4e-3 + 8 * 25e-6);
}

TEST_CASE("fewer than 10 runs keep a prior's slope per sequence and fit the fixed work alone") {
  // Three runs made with 0.4 ms + 25 us x batch, fitted from a prior of 1 ms + 25 us: the slope is kept, the fixed
  // work comes back as 0.4 ms, every error after is 0. From a prior of 1 ms + 50 us the same runs keep 50 us: fewer
  // than 10 runs do not move the slope, whatever they say.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  const std::vector<validate::EngineRun> runs = runs_with_engine_work(spec, bare);
  topologies::ImplProfile prior = bare;
  prior.engine_step = topologies::EngineStep{1e-3, 25e-6, 0.0, "prior", std::nullopt, 0.0, 0.0};
  validate::EngineStepFit fit = validate::fit_engine_step(spec, prior, runs);
  CHECK(fit.per_sequence_from_prior);
  CHECK_FALSE(fit.per_sequence_fitted);
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
  prior.engine_step = topologies::EngineStep{1e-3, 50e-6, 0.0, "prior", std::nullopt, 0.0, 0.0};
  fit = validate::fit_engine_step(spec, prior, runs);
  CHECK(fit.step.per_sequence_s == doctest::Approx(50e-6).scale(1e-12));
}

TEST_CASE("below 10 runs, a run far from the others pulls the fixed work no harder than one at Huber's threshold") {
  // Three runs made with 0.4 ms + 25 us x batch, the third measured 3x (a mismeasured run), fitted from a prior of
  // 1 ms + 25 us with the default profile's band, 12.5 %: Huber's threshold h = 1.345 / 1.645 x 0.125 = 0.1022. At the
  // fit each exact run's relative residual is u_i (0.4 ms - f), u_i = steps / measured; the third's, 2/3 + u_3 (0.4
  // ms - f) with u_3 = steps / its 3x time, is far over h: clamped. So u_1^2 (0.4 ms - f) + u_2^2 (0.4 ms - f) +
  // u_3 h = 0: f = 0.4 ms + u_3 h / (u_1^2 + u_2^2). Least squares would fold a third of the third's excess into f.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  std::vector<validate::EngineRun> runs = runs_with_engine_work(spec, bare);
  runs[2].measured_s *= 3;
  topologies::ImplProfile prior = bare;
  prior.engine_step = topologies::EngineStep{1e-3, 25e-6, 0.0, "prior", std::nullopt, 0.0, 0.0};
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, prior, runs);
  const double h = 1.345 / 1.645 * bare.uncertainty.compute;
  std::vector<double> u;
  for (const validate::EngineRun& run : runs) u.push_back(128 / run.measured_s);
  const double expected_s = 0.4e-3 + u[2] * h / (u[0] * u[0] + u[1] * u[1]);
  CHECK(fit.step.fixed_s == doctest::Approx(expected_s).scale(1e-12).epsilon(1e-9));
  CHECK(2.0 / 3.0 + u[2] * (0.4e-3 - fit.step.fixed_s) > h);  // the third run clamped indeed
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12));
  // A prior that claims no band leaves Huber's threshold at 0: least squares instead, which on the three exact runs
  // gives the 0.4 ms they were made with.
  prior.uncertainty.compute = 0;
  const std::vector<validate::EngineRun> exact = runs_with_engine_work(spec, bare);
  CHECK(validate::fit_engine_step(spec, prior, exact).step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12));
}

TEST_CASE("one batch size fits the fixed work alone, and a run the model over-predicts gives no negative work") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  validate::EngineRun run = validate::read_engine_run(data("latency-b8.json"));
  run.measured_s = validate::predict_engine_run(spec, bare, run).predicted_s + 128 * 0.5e-3;
  validate::EngineStepFit fit = validate::fit_engine_step(spec, bare, {run});
  CHECK_FALSE(fit.per_sequence_fitted);
  CHECK(fit.step.fixed_s == doctest::Approx(0.5e-3).scale(1e-12));
  CHECK(fit.step.per_sequence_s == 0);
  run.measured_s = validate::predict_engine_run(spec, bare, run).predicted_s * 0.9;
  fit = validate::fit_engine_step(spec, bare, {run});
  CHECK(fit.step.fixed_s == 0);
}

TEST_CASE("vLLM's serving results: the concurrency, the mean lengths, TP from the metadata, the mean TPOT") {
  CHECK(validate::is_engine_benchmark_file(data("serve-c16.json")));
  const validate::EngineRun run = validate::read_engine_run(data("serve-c16.json"));
  CHECK(run.benchmark == "serve");
  CHECK(run.workload == "llama3.1-8b");
  CHECK(run.batch == 16);
  CHECK(run.input_len == 1024);  // 327,680 / 320
  CHECK(run.output_len == 128);  // 40,960 / 320
  CHECK(run.tp == 1);            // "tensor_parallel_size": "1", as --metadata writes it
  CHECK(run.measured_s == doctest::Approx(15.6e-3).scale(1e-12));
  CHECK(run.mean_ttft_s == doctest::Approx(61.3e-3).scale(1e-12));
  CHECK(run.median_itl_s == doctest::Approx(12.1e-3).scale(1e-12));
  CHECK(run.p99_itl_s == doctest::Approx(48.3e-3).scale(1e-12));
  CHECK(run.engine_steps() == 1);
  CHECK(refusal(data("serve-rate8.json")).find("request_rate 8.0: requests arriving at a rate") != std::string::npos);
  CHECK(refusal(data("serve-no-tp.json")).find("--metadata tensor_parallel_size=N") != std::string::npos);
}

TEST_CASE("a serving run's TPOT: the step at the concurrency plus (C - 1) / (output - 1) prompts' prefills") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  const validate::EngineRun serve = validate::read_engine_run(data("serve-c16.json"));
  const validate::EnginePrediction p = validate::predict_engine_run(spec, bare, serve);
  // One prompt of 1,024 tokens: 2 x parameters x 1,024 + 2 x 32 layers x 1,024^2 x 32 heads x 128, over 989 TFLOP/s
  // x 0.5; 15 of them over 127 steps.
  const double parameters = model::find_workload("llama3.1-8b").parameters;
  const double prompt_s = (2 * parameters * 1024 + 2.0 * 32 * 1024 * 1024 * 32 * 128) / (989e12 * 0.5);
  CHECK(p.prefill_s == doctest::Approx(prompt_s).scale(1e-12));
  CHECK(p.predicted_s == doctest::Approx(p.step_s + 15.0 / 127 * prompt_s).scale(1e-12));
  CHECK(p.ttft_s == doctest::Approx(1.5 * p.step_s + prompt_s).scale(1e-12));  // half a step's wait, then its own
  // 15 / 127 = 11.8 % of the steps carry a prompt: under half (the median ITL a plain step), over 1 % (the p99 one
  // with a prompt's prefill)
  CHECK(p.median_itl_s == doctest::Approx(p.step_s).scale(1e-12));
  CHECK(p.p99_itl_s == doctest::Approx(p.step_s + prompt_s).scale(1e-12));
  // The step is a latency run's at the same batch and middle context.
  validate::EngineRun latency = serve;
  latency.benchmark = "latency";
  CHECK(validate::predict_engine_run(spec, bare, latency).step_s == doctest::Approx(p.step_s).scale(1e-12));
  CHECK(p.middle_context == 1024 + 64);
  // The engine's work counts once in a TPOT: 0.4 ms + 16 x 25 us = 0.8 ms.
  topologies::ImplProfile engine = bare;
  engine.engine_step = topologies::EngineStep{0.4e-3, 25e-6, 0.0, "test", std::nullopt, 0.0, 0.0};
  CHECK(validate::predict_engine_run(spec, engine, serve).predicted_s - p.predicted_s ==
        doctest::Approx(0.8e-3).scale(1e-12));
}

TEST_CASE("SGLang's one-batch lines: a run each, the median decode step its quantity") {
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/sglang/sglang-one-batch.jsonl";
  CHECK(validate::is_engine_benchmark_file(file));
  const std::vector<validate::EngineRun> runs = validate::read_engine_runs(file);
  REQUIRE(runs.size() == 2u);
  CHECK(runs[0].engine == "sglang");
  CHECK(runs[0].benchmark == "step");
  CHECK(runs[1].batch == 32);
  CHECK(runs[1].input_len == 1024);
  CHECK(runs[1].output_len == 16);
  CHECK(runs[1].measured_s == 0.00913);
  CHECK(runs[1].engine_steps() == 1);
  CHECK(runs[1].file.find("line 2") != std::string::npos);
  // Its prediction is the step at the middle context, 1,024 + 8, as a latency run's step.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile bare = topologies::default_impl_profile();
  const validate::EnginePrediction p = validate::predict_engine_run(spec, bare, runs[1]);
  validate::EngineRun latency = runs[1];
  latency.benchmark = "latency";
  CHECK(p.predicted_s == doctest::Approx(validate::predict_engine_run(spec, bare, latency).step_s).scale(1e-12));
  CHECK(p.middle_context == 1032);
  const std::string bare_line =
      std::string(TREERING_SOURCE_DIR) + "/validate/tests/data/sglang/one-batch-no-model.jsonl";
  try {
    validate::read_engine_runs(bare_line);
    FAIL("expected an InputError");
  } catch (const topologies::InputError& e) {
    CHECK(std::string(e.what()).find("add \"model_path\" and \"tp_size\"") != std::string::npos);
    CHECK(e.location().line == 1);
  }
}
