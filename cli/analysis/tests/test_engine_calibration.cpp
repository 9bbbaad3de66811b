// The band a fitted engine profile states (engine_runs_report.hpp, calibrate_engine): the fit's residuals and the
// kernels' 12.5 % in quadrature; from 10 runs or more it may narrow the prior's band, from fewer it never does.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "treering/analysis/engine_runs_report.hpp"
#include "treering/topologies/impl_profile.hpp"
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
  CHECK(c.fitted.uncertainty.compute == doctest::Approx(0.125).scale(1e-12).epsilon(1e-3));
  const treering::analysis::EngineValidation v = treering::analysis::validate_engine_runs(spec, vllm, {path});
  CHECK(v.cases.size() == 12);
  CHECK(v.contradicted.size() == 1);
}
