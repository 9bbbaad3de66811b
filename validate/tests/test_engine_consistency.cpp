// Runs their own sweep contradicts (engine_consistency.hpp): slower by more than 10 % than a run of the same engine,
// model and TP that does at least their work.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "treering/validate/engine_consistency.hpp"

using namespace treering;

namespace {

validate::EngineRun run_of(int tp, int batch, long long input_len, long long output_len, double measured_s,
                           const std::string& benchmark = "latency") {
  validate::EngineRun run;
  run.engine = "vllm 0.6.1 ROCm";
  run.benchmark = benchmark;
  run.workload = "qwen2-7b";
  run.tp = tp;
  run.batch = batch;
  run.input_len = input_len;
  run.output_len = output_len;
  run.measured_s = measured_s;
  run.file = "t.csv line " + std::to_string(measured_s);
  return run;
}

}  // namespace

TEST_CASE("a run slower than a larger run of its setup is contradicted, against the fastest such run") {
  // LLM-Inference-Bench's MI300X table, Qwen2 7B at TP 1: batch 1 of 128 tokens took 2.98983 s, batch 1 of 256
  // 1.93428 s and batch 16 of 128 1.44788 s. Both larger runs contradict the first; the faster one is named:
  // 2.98983 / 1.44788 = 2.0650x. The 256-token run is not contradicted: batch 16's 128 tokens are not at least its 256.
  const std::vector<validate::EngineRun> runs{run_of(1, 1, 128, 128, 2.98983), run_of(1, 1, 256, 256, 1.93428),
                                              run_of(1, 16, 128, 128, 1.44788)};
  const std::vector<validate::ContradictedRun> contradicted = validate::contradicted_runs(runs);
  REQUIRE(contradicted.size() == 1);
  CHECK(contradicted[0].run == 0);
  CHECK(contradicted[0].larger == 2);
  CHECK(contradicted[0].slowdown == doctest::Approx(2.98983 / 1.44788).scale(1e-12));
  CHECK(contradicted[0].text.find("2.06x") != std::string::npos);  // 2.06497 to two decimals
  CHECK(validate::slowdown_text(validate::kContradictedSlowdown) == "1.10x");
  CHECK(contradicted[0].text.find("batch 16, 128 in, 128 out") != std::string::npos);
}

TEST_CASE("within 10 %, at another TP or model, or with a longer serving output, no run contradicts another") {
  // 1.09 s against a larger run's 1.0 s: within the benchmarks' noise allowance (kContradictedSlowdown = 1.10).
  CHECK(validate::contradicted_runs({run_of(1, 1, 128, 128, 1.09), run_of(1, 1, 256, 256, 1.0)}).empty());
  CHECK(validate::contradicted_runs({run_of(1, 1, 128, 128, 1.2), run_of(1, 1, 256, 256, 1.0)}).size() == 1);
  // another TP, another model: other setups
  CHECK(validate::contradicted_runs({run_of(1, 1, 128, 128, 2.0), run_of(2, 16, 256, 256, 1.0)}).empty());
  validate::EngineRun llama = run_of(1, 16, 256, 256, 1.0);
  llama.workload = "llama3-8b";
  CHECK(validate::contradicted_runs({run_of(1, 1, 128, 128, 2.0), llama}).empty());
  // the same lengths and batch: neither does more work
  CHECK(validate::contradicted_runs({run_of(1, 8, 128, 128, 2.0), run_of(1, 8, 128, 128, 1.0)}).empty());
  // serving runs' mean TPOT: a longer output spreads the newcomers' prefills thinner, so only equal outputs compare
  CHECK(validate::contradicted_runs({run_of(1, 8, 128, 128, 2e-2, "serve"), run_of(1, 16, 128, 256, 1e-2, "serve")})
            .empty());
  CHECK(validate::contradicted_runs({run_of(1, 8, 128, 128, 2e-2, "serve"), run_of(1, 16, 128, 128, 1e-2, "serve")})
            .size() == 1);
}
