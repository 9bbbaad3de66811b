// The band a fitted engine profile states (engine_runs_report.hpp, calibrate_engine): the fit's residuals and the
// kernels' 12.5 % in quadrature; from 10 runs or more it may narrow the prior's band, from fewer it never does.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "treering/analysis/engine_runs_report.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/engine_fit.hpp"

namespace topologies = treering::topologies;

namespace {

// `count` Llama 3 8B latency runs on one H100 (batch 1, 2, 3, ...; 128 tokens in and out) whose times are the model's
// without engine work plus 128 steps x (0.4 ms + 25 us x batch): work the fit recovers exactly, every residual 0.
std::string exact_runs_file(int count) {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/engine-band-" + std::to_string(count) + ".csv";
  std::ofstream out(path);
  out << "engine,version,model,tp,batch,input_len,output_len,quantity,measured_s\n";
  for (int batch = 1; batch <= count; ++batch) {
    treering::validate::EngineRun run;
    run.workload = "llama3-8b";
    run.batch = batch;
    run.input_len = run.output_len = 128;
    run.latencies_s = {1.0};
    const double model_s =
        treering::validate::predict_engine_run(spec, topologies::default_impl_profile(), run).predicted_s;
    out << "vllm,test,meta-llama/Meta-Llama-3-8B,1," << batch << ",128,128,latency,"
        << std::to_string(model_s + 128 * (0.4e-3 + 25e-6 * batch)) << "\n";
  }
  return path;
}

}  // namespace

TEST_CASE(
    "a fitted engine profile's band: residuals and the kernels' 12.5 % in quadrature, narrowed only from 10 runs") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile vllm = topologies::load_impl_profile("vllm");  // band 17.2 %
  // 12 runs fitted exactly (to the 6 digits written): sqrt(~0^2 + 0.125^2) = 12.5 %, under the prior's 17.2 %.
  const treering::analysis::EngineCalibration many =
      treering::analysis::calibrate_engine(spec, vllm, {exact_runs_file(12)}, "many.yaml");
  CHECK(many.fitted.uncertainty.compute == doctest::Approx(0.125).scale(1e-12).epsilon(1e-3));
  // 3 runs: the prior's 17.2 % kept (the quadrature, 12.5 %, is narrower), its slope per sequence too.
  const treering::analysis::EngineCalibration few =
      treering::analysis::calibrate_engine(spec, vllm, {exact_runs_file(3)}, "few.yaml");
  CHECK(few.fitted.uncertainty.compute == doctest::Approx(0.172).scale(1e-12));
  CHECK(few.fit.per_sequence_from_prior);
}

TEST_CASE("a run slower than a larger run of its setup is listed, and kept out of the fit and the figures") {
  // exact_runs_file(12) plus batch 1 of 128 tokens in and 64 out, measured 1.5x the batch-1 run of 128 out, which
  // does more work (as many sequences, a longer output): contradicted (1.5 > 1.10), left out; the 12 fit as before.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const topologies::ImplProfile vllm = topologies::load_impl_profile("vllm");
  const std::string path = exact_runs_file(12);
  const treering::analysis::EngineCalibration twelve =
      treering::analysis::calibrate_engine(spec, vllm, {path}, "twelve.yaml");
  std::ifstream in(path);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  in.close();
  const double batch1_s = std::stod(first.substr(first.rfind(',') + 1));
  std::ofstream(path, std::ios::app) << "vllm,test,meta-llama/Meta-Llama-3-8B,1,1,128,64,latency,"
                                     << std::to_string(1.5 * batch1_s) << "\n";
  const treering::analysis::EngineCalibration c = treering::analysis::calibrate_engine(spec, vllm, {path}, "c.yaml");
  CHECK(c.runs.size() == 12);
  REQUIRE(c.contradicted.size() == 1);
  CHECK(c.contradicted[0].run.output_len == 64);
  CHECK(c.contradicted[0].contradiction.find("1.50x") != std::string::npos);
  CHECK(c.fit.step.fixed_s == twelve.fit.step.fixed_s);  // the contradicted run changed nothing
  CHECK(c.fit.step.per_sequence_s == twelve.fit.step.per_sequence_s);
  CHECK(c.fitted.uncertainty.compute == twelve.fitted.uncertainty.compute);
  const treering::analysis::EngineValidation v = treering::analysis::validate_engine_runs(spec, vllm, {path});
  CHECK(v.cases.size() == 12);
  CHECK(v.contradicted.size() == 1);
}

TEST_CASE("with no run left, the refusal counts the runs that do not fit and those contradicted") {
  // Llama 2 70B on one MI300X: batch 64 of 2,048 + 2,048 tokens needs 138 GB of weights and 86 GB of KV cache, over
  // 0.9 x 192 GB - 1 GB; batch 1 of the same lengths took longer (20 s against 10 s): contradicted by it.
  const topologies::ClusterSpec spec = topologies::load_cluster("mi300x");
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/engine-none-left.csv";
  std::ofstream(path) << "engine,version,model,tp,batch,input_len,output_len,quantity,measured_s\n"
                      << "vllm,test,meta-llama/Llama-2-70b-hf,1,64,2048,2048,latency,10.0\n"
                      << "vllm,test,meta-llama/Llama-2-70b-hf,1,1,2048,2048,latency,20.0\n";
  std::string message;
  try {
    treering::analysis::validate_engine_runs(spec, topologies::load_impl_profile("vllm-rocm"), {path});
  } catch (const topologies::InputError& error) {
    message = error.what();
  }
  CHECK(message.find("no run to predict: of 2 runs, 1 need more memory") == 0);
  CHECK(message.find("and 1 took over 1.10x the time of a larger run") != std::string::npos);
}
