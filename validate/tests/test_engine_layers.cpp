// The engine fit's per-layer term (engine_fit.hpp): the extra an engine spends on each decoder layer at any TP comes
// back from runs of models of different depths made with it, apart from the per-collective term; runs of one depth
// cannot tell it from the fixed work.
#include <doctest/doctest.h>

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

topologies::ImplProfile engine(double per_collective_s, double per_layer_s) {
  topologies::ImplProfile profile = topologies::default_impl_profile();
  profile.engine_step = topologies::EngineStep{0.4e-3, 25e-6, 0.0, "test", std::nullopt, per_collective_s, per_layer_s};
  return profile;
}

// llama3.1-8b (32 layers) at TP 1 and 2 and llama3.1-70b (80 layers) at TP 4 and 8, batch 1, 8, 32 and 64 each
// (latency-b8.json's 32 tokens in, 128 out): 16 runs measured as `truth` predicts them.
std::vector<validate::EngineRun> two_depths(const topologies::ClusterSpec& spec, const topologies::ImplProfile& truth) {
  std::vector<validate::EngineRun> runs = testing::engine_runs_made_with(spec, truth, {1, 2}, {1, 8, 32, 64});
  std::vector<validate::EngineRun> deep = testing::engine_runs_made_with(spec, truth, {4, 8}, {1, 8, 32, 64});
  for (validate::EngineRun& run : deep) {
    run.workload = "llama3.1-70b";
    run.measured_s = validate::predict_engine_run(spec, truth, run).predicted_s;
    runs.push_back(run);
  }
  return runs;
}

}  // namespace

TEST_CASE("per layer: the extra a decoder layer costs comes back from runs of 32- and 80-layer models") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const std::vector<validate::EngineRun> runs = two_depths(spec, engine(60e-6, 130e-6));
  // A 70B run: 127 decode steps of 80 layers, 130 us more each: 1.3208 s more than without the term.
  const validate::EnginePrediction with = validate::predict_engine_run(spec, engine(60e-6, 130e-6), runs[8]);
  const validate::EnginePrediction without = validate::predict_engine_run(spec, engine(60e-6, 0.0), runs[8]);
  CHECK(with.layers == 80);
  CHECK(with.predicted_s - without.predicted_s == doctest::Approx(1.3208).scale(1e-12).epsilon(1e-9));
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, engine(0.0, 0.0), runs);
  CHECK(fit.per_layer_fitted);
  CHECK(fit.per_collective_fitted);
  CHECK(fit.step.per_layer_s == doctest::Approx(130e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.per_collective_s == doctest::Approx(60e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
}

TEST_CASE("per layer: one model's depth cannot tell it from the fixed work; a prior's kept") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  // llama3.1-8b alone at TP 1, 2 and 4 (12 runs): 32 layers in every step, so the term is the fixed work again: not
  // fitted, and the fixed work takes it (0.4 ms + 32 x 130 us x 127 / 128 steps: the prefill has none).
  const std::vector<validate::EngineRun> one_depth =
      testing::engine_runs_made_with(spec, engine(60e-6, 130e-6), {1, 2, 4}, {1, 8, 32, 64});
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, engine(0.0, 0.0), one_depth);
  CHECK_FALSE(fit.per_layer_fitted);
  CHECK(fit.step.per_layer_s == 0.0);
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3 + 32 * 130e-6 * 127 / 128).scale(1e-12).epsilon(1e-6));
  // From a prior holding 130 us the same runs keep it, and the fixed work comes back as made.
  const validate::EngineStepFit held = validate::fit_engine_step(spec, engine(0.0, 130e-6), one_depth);
  CHECK(held.per_layer_from_prior);
  CHECK(held.step.per_layer_s == 130e-6);
  CHECK(held.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  // Three runs: the prior's slopes kept, 130 us a layer among them.
  const std::vector<validate::EngineRun> three(one_depth.begin(), one_depth.begin() + 3);
  const validate::EngineStepFit few = validate::fit_engine_step(spec, engine(60e-6, 130e-6), three);
  CHECK(few.per_sequence_from_prior);
  CHECK(few.step.per_layer_s == 130e-6);
  CHECK(few.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
}

TEST_CASE("per layer: without a run on one GPU it trades with the per-collective term, and is not fitted") {
  // llama3.1-8b at TP 2 and 4 and llama3.1-70b at TP 4 and 8: every step has 2 L + 1 collectives, so the layer column
  // is the collective column's half less the fixed work's: the runs cannot tell the two costs apart. The prior's 130 us
  // is kept; its per-collective cost fitted from the collective counts, the fixed work and per sequence as made.
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  std::vector<validate::EngineRun> runs = testing::engine_runs_made_with(spec, engine(60e-6, 130e-6), {2, 4}, {1, 8});
  std::vector<validate::EngineRun> deep = testing::engine_runs_made_with(spec, engine(60e-6, 130e-6), {4, 8}, {1, 8});
  for (validate::EngineRun& run : deep) {
    run.workload = "llama3.1-70b";
    run.measured_s = validate::predict_engine_run(spec, engine(60e-6, 130e-6), run).predicted_s;
  }
  runs.insert(runs.end(), deep.begin(), deep.end());
  runs.insert(runs.end(), deep.begin(), deep.end());  // 12 runs
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, engine(0.0, 130e-6), runs);
  CHECK_FALSE(fit.per_layer_fitted);
  CHECK(fit.per_layer_from_prior);
  CHECK(fit.step.per_layer_s == 130e-6);
  CHECK(fit.step.per_collective_s == doctest::Approx(60e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
}
