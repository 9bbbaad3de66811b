// treering validate and calibrate on engine tables (LMDeploy's profile_generation CSV, treering's table of
// published runs): a run whose batch does not fit in memory is listed, not predicted; the band and how many runs
// fall inside it are reported; a fit on fewer than 10 runs keeps the prior preset's slope per sequence.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using treering::cli::testing::run_treering;

namespace {

const std::string kDir = std::string(TREERING_BINARY_DIR) + "/tests/";

// Two Llama 2 7B runs on one 80 GB A100: batch 1 of 128 + 128 tokens fits; batch 64 of 2,048 + 2,048 needs 64 x
// 4,096 x 524,288 B = 137 GB of KV cache and does not. The times are made up (the first is 10 ms a step).
std::string table_file() {
  const std::string path = kDir + "engine-table-fit-and-not.csv";
  std::ofstream(path) << "# made-up times\n"
                         "engine,version,model,tp,batch,input_len,output_len,quantity,measured_s\n"
                         "lmdeploy,0.1,meta-llama/Llama-2-7b-hf,1,1,128,128,step,0.010\n"
                         "lmdeploy,0.1,meta-llama/Llama-2-7b-hf,1,64,2048,2048,step,0.047\n";
  return path;
}

}  // namespace

TEST_CASE("validate on an engine table: the run that does not fit in memory is listed apart, with why") {
  const auto table = run_treering("validate --cluster dgx-a100 --nodes 1 " + table_file());
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("1 runs not predicted, their batch not fitting in memory") != std::string::npos);
  CHECK(table.out.find("inside the profile's band of +/-12.5 %") != std::string::npos);  // the efficient profile's
  const auto json = run_treering("validate --cluster dgx-a100 --nodes 1 " + table_file() + " --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(json.out);
  CHECK(out["summary"]["runs"] == 1);
  CHECK(out["summary"]["not_fitting"] == 1);
  CHECK(out["not_fitting"][0]["batch"] == 64);
  CHECK(out["not_fitting"][0]["memory_shortfall"].get<std::string>().find("KV cache 137.4 GB") != std::string::npos);
  CHECK(out["summary"]["band"] == 0.125);
  const double error = out["runs"][0]["rel_error"].get<double>();
  CHECK(out["summary"]["inside_band"] == (std::abs(error) <= 0.125 ? 1 : 0));
}

TEST_CASE("calibrate on an engine table from an engine preset keeps its slope with fewer than 10 runs") {
  const std::string fitted = kDir + "engine-table-fitted.yaml";
  std::remove(fitted.c_str());
  const auto calibrated = run_treering("calibrate " + table_file() + " --cluster dgx-a100 --nodes 1 --impl vllm -o " +
                                       fitted + " --format json");
  REQUIRE_MESSAGE(calibrated.exit_code == 0, calibrated.err);
  const nlohmann::json fit = nlohmann::json::parse(calibrated.out);
  CHECK(fit["prior"] == "vllm");
  CHECK(fit["summary"]["runs"] == 1);  // the batch of 64 left out
  CHECK(fit["summary"]["not_fitting"] == 1);
  CHECK(fit["engine_step"]["per_sequence_from_prior"] == true);
  CHECK(fit["engine_step"]["per_sequence_s"].get<double>() == doctest::Approx(78.0e-6).scale(1e-12));  // vllm.yaml's
  CHECK(fit["engine_step"]["gemm_flop_efficiency"].is_null());  // vllm's GEMMs: none
  CHECK(std::ifstream(fitted).good());
  // From vllm-rocm the GEMM, per-collective and per-layer terms are slopes too, and its PagedAttention efficiencies
  // need 10 runs: all kept (vllm-rocm.yaml's values), and written to the fitted profile.
  std::remove(fitted.c_str());
  const auto rocm = run_treering("calibrate " + table_file() + " --cluster mi300x --nodes 1 --impl vllm-rocm -o " +
                                 fitted + " --format json");
  REQUIRE_MESSAGE(rocm.exit_code == 0, rocm.err);
  const nlohmann::json rocm_fit = nlohmann::json::parse(rocm.out);
  const treering::topologies::EngineStep preset = *treering::topologies::load_impl_profile("vllm-rocm").engine_step;
  const nlohmann::json& step = rocm_fit["engine_step"];
  CHECK(step["gemm_flop_efficiency"].get<double>() == preset.gemm_flop_efficiency);
  CHECK(step["gemm_fitted"] == false);
  CHECK(step["paged_attention"]["v1_bandwidth_efficiency"] == preset.paged_attention->v1_bandwidth_efficiency);
  CHECK(step["per_collective_s"].get<double>() == preset.per_collective_s);
  CHECK(step["per_layer_s"].get<double>() == preset.per_layer_s);
  CHECK(step["per_collective_fitted"] == false);
  CHECK(step["per_layer_fitted"] == false);
  CHECK(step["paged_v1_fitted"] == false);
  CHECK(step["source"].get<std::string>().find("PagedAttention efficiencies kept from vllm-rocm") != std::string::npos);
  // the written profile carries them (to its 9 written digits)
  const treering::topologies::EngineStep written = *treering::topologies::load_impl_profile_file(fitted).engine_step;
  CHECK(written.gemm_flop_efficiency == doctest::Approx(preset.gemm_flop_efficiency).scale(1e-12));
  CHECK(written.per_layer_s == doctest::Approx(preset.per_layer_s).scale(1e-12));
  CHECK(written.per_collective_s == doctest::Approx(preset.per_collective_s).scale(1e-12));
  CHECK(written.paged_attention->v2_bandwidth_efficiency ==
        doctest::Approx(preset.paged_attention->v2_bandwidth_efficiency).scale(1e-12));
  CHECK(written.paged_attention->v1_shared_memory_per_multiprocessor_bytes == 65536);
}
