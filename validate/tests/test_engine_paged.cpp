// The engine fit with vLLM's PagedAttention kernels as the engine's attention (engine_fit.hpp): their two bandwidth
// efficiencies come back from runs made with them, and below 10 runs the prior's are kept.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/engine_fit.hpp"
#include "treering/validate/engine_runs.hpp"
#include "engine_runs_made.hpp"

using namespace treering;

namespace {

topologies::ImplProfile paged_profile(double v1_efficiency, double v2_efficiency) {
  topologies::ImplProfile profile = topologies::default_impl_profile();
  profile.engine_step = topologies::EngineStep{0.4e-3, 25e-6, 0.0, "test", std::nullopt, 0.0, 0.0};
  profile.engine_step->paged_attention = topologies::PagedAttention{v1_efficiency, v2_efficiency};
  return profile;
}

// 12 runs of llama3.1-8b (TP 1 and 2, batch 1-64, 128 tokens out and 1,024, 2,048 or 4,096 in: two partitions or
// more) measured as `truth` predicts them. v1 runs where batch x query heads a GPU > 512: at TP 1 (32 heads) batch
// 32 and 64, at TP 2 (16) batch 64; v2 the other nine. (At one context the reads, like the GEMM FLOPs, would go as
// batch / TP, and the GEMM term could stand in for a kernel's.)
std::vector<validate::EngineRun> runs_made_with(const topologies::ClusterSpec& spec,
                                                const topologies::ImplProfile& truth) {
  return testing::engine_runs_made_with(spec, truth, {1, 2}, {1, 4, 8, 16, 32, 64}, {1024, 2048, 4096});
}

}  // namespace

TEST_CASE("paged attention: the v1 and v2 efficiencies come back from runs made with them") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const std::vector<validate::EngineRun> runs = runs_made_with(spec, paged_profile(0.4, 1.2));
  const validate::EnginePrediction v1_run = validate::predict_engine_run(spec, paged_profile(0.4, 1.2), runs[5]);
  CHECK(v1_run.paged_v1_at_rated_s > 0);  // TP 1, batch 64: 64 x 32 > 512
  CHECK(v1_run.paged_v2_at_rated_s == 0);
  // runs[5] has 4,096 tokens in: middle context 4,160; 32 layers x 64 x 32 x 4,160 x 2 x 128 x 2 B = 139.6 GB at
  // 0.4 x 3.35 TB/s: 104.2 ms a step.
  CHECK(v1_run.attention_s == doctest::Approx(32 * 64 * 32 * 4160 * 512.0 / (0.4 * 3.35e12)).scale(1e-12));
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, paged_profile(0.9, 0.9), runs);
  CHECK(fit.paged_v1_fitted);
  CHECK(fit.paged_v2_fitted);
  REQUIRE(fit.step.paged_attention.has_value());
  CHECK(fit.step.paged_attention->v1_bandwidth_efficiency == doctest::Approx(0.4).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.paged_attention->v2_bandwidth_efficiency == doctest::Approx(1.2).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
  for (double e : fit.errors_before) CHECK(std::isfinite(e));
}

TEST_CASE("paged attention: an efficiency past the loader's range is held at the prior's, below 10 runs both are") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  // v2 read 10x faster than the rated bandwidth (efficiency 10, past 4): no kernel does that; v2 held at the prior's
  // 0.9, v1 still fitted (its runs alone pin it: the errors are not 0, the v2 runs being over-predicted).
  const std::vector<validate::EngineRun> runs = runs_made_with(spec, paged_profile(0.4, 10.0));
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, paged_profile(0.9, 0.9), runs);
  CHECK_FALSE(fit.paged_v2_fitted);
  CHECK(fit.step.paged_attention->v2_bandwidth_efficiency == 0.9);
  CHECK(fit.paged_v1_fitted);
  // Three runs: both efficiencies and the slope kept (the prior has one), the fixed work fitted.
  const std::vector<validate::EngineRun> three(runs.begin(), runs.begin() + 3);
  const validate::EngineStepFit few = validate::fit_engine_step(spec, paged_profile(0.4, 1.2), three);
  CHECK_FALSE(few.paged_v1_fitted);
  CHECK_FALSE(few.paged_v2_fitted);
  CHECK(few.step.paged_attention->v1_bandwidth_efficiency == 0.4);
  CHECK(few.step.paged_attention->v2_bandwidth_efficiency == 1.2);
  CHECK(few.per_sequence_from_prior);
}

TEST_CASE("paged attention: v1's occupancy scale is in the fit's column, so its efficiency comes back as set") {
  // llama2-7b (4,096 positions) with 64 KiB of shared memory a multiprocessor: v1 runs at twice its 8,192-token rate.
  // Runs made with v1 at 0.3 come back at 0.3. The fit's v1 reads of a TP 1 run at batch 64 (2,048 + 128 tokens:
  // middle context 2,112; 64 x 32 > 512: v1) are 32 layers x 64 x 32 x 2,112 x 2 x 128 x 2 B at 3.35 TB/s, halved.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::ImplProfile truth = paged_profile(0.3, 1.2);
  truth.engine_step->paged_attention->v1_shared_memory_per_multiprocessor_bytes = 65536;
  std::vector<validate::EngineRun> runs = runs_made_with(spec, truth);
  for (validate::EngineRun& run : runs) {
    run.workload = "llama2-7b";
    run.input_len = std::min(run.input_len, 2048LL);  // within Llama 2's context
    run.measured_s = validate::predict_engine_run(spec, truth, run).predicted_s;
  }
  topologies::ImplProfile prior = paged_profile(0.9, 0.9);
  prior.engine_step->paged_attention->v1_shared_memory_per_multiprocessor_bytes = 65536;
  const validate::EnginePrediction tp1_batch64 = validate::predict_engine_run(spec, prior, runs[5]);
  CHECK(tp1_batch64.paged_v1_at_rated_s == doctest::Approx(0.5 * 32 * 64 * 32 * 2112 * 512.0 / 3.35e12).scale(1e-12));
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, prior, runs);
  REQUIRE(fit.paged_v1_fitted);
  CHECK(fit.step.paged_attention->v1_bandwidth_efficiency == doctest::Approx(0.3).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.paged_attention->v1_shared_memory_per_multiprocessor_bytes == 65536);
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
}
