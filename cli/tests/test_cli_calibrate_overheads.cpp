// treering calibrate on timed decodes: timings made with known overheads give them back, the fitted profile
// works with --impl, and what cannot be fitted is refused.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

namespace {

const std::string kDir = std::string(TREERING_BINARY_DIR) + "/tests/";

// A program like the paper's Llama run with a 6 us launch and a 15 us host synchronisation.
const char* kTruth = R"(name: truth
description: "6 us launches, 15 us host synchronisations"
implementation: "cli test"
kernel_launch: 6us
host_round_trip: 15us
kv_expansion: true
other_kernels_per_layer: 32
uncertainty: {compute: 0.5, communication: 0.23, source: "test"}
per_layer:
  - {what: "barrier", collective: allreduce, bytes: 4B, host_round_trips: 1, source: "test"}
  - {what: "length + item", algorithms: [ring], collective: allreduce, bytes: 8B, host_round_trips: 1, source: "test"}
)";

double generation_s(const std::string& profile, const std::string& algo, const std::string& gpus) {
  auto result = run_treering("predict --cluster dgx-h100 --nodes 1 --gpus " + gpus +
                             " --workload llama3.1-8b --seq-len 20k --algo " + algo + " --tokens 10 --prefill --impl " +
                             profile + " --format json");
  REQUIRE(result.exit_code == 0);
  return nlohmann::json::parse(result.out)[0]["generation_s"].get<double>();
}

}  // namespace

TEST_CASE("calibrate on a timings CSV gives back the overheads the timings were made with") {
  const std::string truth = kDir + "overheads-truth.yaml";
  std::ofstream(truth) << kTruth;
  const std::string csv = kDir + "overheads-timings.csv";
  {
    std::ofstream out(csv);
    out << "cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s\n";
    for (const char* algo : {"ring", "tree"}) {
      out << "dgx-h100,llama3.1-8b," << algo << ",2,20k,1,10,true," << generation_s(truth, algo, "0,1") << '\n';
      out << "dgx-h100,llama3.1-8b," << algo << ",8,20k,1,10,true," << generation_s(truth, algo, "0,1,2,3,4,5,6,7")
          << '\n';
    }
  }
  // The prior is the same program with the wrong costs: the fit moves them to 6 us and 15 us.
  std::string prior_text = kTruth;
  prior_text.replace(prior_text.find("6us"), 3, "2us").replace(prior_text.find("15us"), 4, "40us");
  const std::string prior = kDir + "overheads-prior.yaml";
  std::ofstream(prior) << prior_text;
  const std::string fitted = kDir + "overheads-fitted.yaml";
  auto result = run_treering("calibrate " + csv + " --impl " + prior + " --fit kernel_launch,host_round_trip -o " +
                             fitted + " --format json");
  REQUIRE(result.exit_code == 0);
  const auto report = nlohmann::json::parse(result.out);
  CHECK(report["overheads"][0]["overhead"] == "kernel_launch");
  CHECK(report["overheads"][0]["prior_s"].get<double>() == doctest::Approx(2e-6).scale(1e-12));
  // Within 0.1 %: the CSV holds the timings to 6 significant digits (the stream's default precision).
  CHECK(report["overheads"][0]["fitted_s"].get<double>() == doctest::Approx(6e-6).scale(1e-12).epsilon(1e-3));
  CHECK(report["overheads"][1]["fitted_s"].get<double>() == doctest::Approx(15e-6).scale(1e-12).epsilon(1e-3));
  CHECK(report["median_abs_rel_error_prior"].get<double>() > 0.01);
  CHECK(report["max_abs_rel_error"].get<double>() < 1e-5);
  // The fitted profile predicts the timings it was fitted to.
  CHECK(generation_s(fitted, "ring", "0,1") ==
        doctest::Approx(generation_s(truth, "ring", "0,1")).scale(1e-12).epsilon(1e-5));
  // The table says each overhead's share.
  auto table =
      run_treering("calibrate " + csv + " --impl " + prior + " --fit kernel_launch,host_round_trip -o " + fitted);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("share of measured time") != std::string::npos);
  CHECK(table.out.find("the rest of the model") != std::string::npos);

  // Four timings cannot fit four overheads; the error says how to choose.
  auto too_many = run_treering("calibrate " + csv + " --impl " + prior + " -o " + fitted);
  CHECK(too_many.exit_code == 2);
  CHECK(too_many.err.find("4 timing(s) cannot fit 4 overhead(s)") != std::string::npos);
  CHECK(too_many.err.find("--fit") != std::string::npos);
  CHECK(run_treering("calibrate " + csv + " --fit dispatch -o " + fitted).exit_code == 2);
  // Timings and benchmarks are calibrated in separate runs; benchmarks need their cluster.
  auto mixed = run_treering("calibrate " + csv +
                            " validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100 -o " + fitted);
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("separate runs") != std::string::npos);
  CHECK(run_treering("calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log -o " + fitted).exit_code == 2);
  auto decode = run_treering("calibrate validate/tests/data/realrun-decode.json -o " + fitted);
  CHECK(decode.exit_code == 2);
  CHECK(decode.err.find("needs --cluster") != std::string::npos);
}
