// The engine fit's per-collective term (engine_fit.hpp): the extra an engine's TP collectives cost over the model's
// estimate comes back from runs of several TP degrees made with it, and is not fitted from runs that cannot tell it
// from the fixed work.
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

topologies::ImplProfile engine(double per_collective_s) {
  topologies::ImplProfile profile = topologies::default_impl_profile();
  profile.engine_step = topologies::EngineStep{0.4e-3, 25e-6, 0.0, "test", std::nullopt, 0.0, 0.0};
  profile.engine_step->per_collective_s = per_collective_s;
  return profile;
}

// 12 runs of llama3.1-8b (latency-b8.json's lengths: 32 in, 128 out) at TP 1, 2 and 4 and batch 1, 8, 32, 64,
// measured as `truth` predicts them.
std::vector<validate::EngineRun> runs_made_with(const topologies::ClusterSpec& spec,
                                                const topologies::ImplProfile& truth, std::vector<int> tps) {
  return testing::engine_runs_made_with(spec, truth, tps, {1, 8, 32, 64});
}

}  // namespace

TEST_CASE("per collective: the extra a TP collective costs comes back from runs of TP 1, 2 and 4") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  const std::vector<validate::EngineRun> runs = runs_made_with(spec, engine(60e-6), {1, 2, 4});
  // At TP 2 a step has 2 x 32 all-reduces and the logits' all-gather: 65 collectives, 127 decode steps of them, 60 us
  // each: 0.495 s more than the same profile without the term.
  const validate::EnginePrediction with = validate::predict_engine_run(spec, engine(60e-6), runs[4]);
  const validate::EnginePrediction without = validate::predict_engine_run(spec, engine(0.0), runs[4]);
  CHECK(with.tp_collectives == 65);
  CHECK(with.predicted_s - without.predicted_s == doctest::Approx(127 * 65 * 60e-6).scale(1e-12));
  CHECK(validate::predict_engine_run(spec, engine(60e-6), runs[0]).tp_collectives == 0);  // one GPU
  const validate::EngineStepFit fit = validate::fit_engine_step(spec, engine(0.0), runs);
  CHECK(fit.per_collective_fitted);
  CHECK(fit.step.per_collective_s == doctest::Approx(60e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  CHECK(fit.step.per_sequence_s == doctest::Approx(25e-6).scale(1e-12).epsilon(1e-6));
  for (double e : fit.errors_after) CHECK(std::fabs(e) < 1e-9);
}

TEST_CASE(
    "per collective: one TP degree of one model cannot tell it from the fixed work; a prior's kept below 10 runs") {
  const topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  // TP 2 alone, 12 runs: every step has 65 collectives, the term is the fixed work again: not fitted, and the fixed
  // work takes it (0.4 ms + 65 x 60 us x 127 / 128 steps: the prefill has none), errors 0.
  const std::vector<validate::EngineRun> tp2 = runs_made_with(spec, engine(60e-6), {2, 2, 2});
  const validate::EngineStepFit one = validate::fit_engine_step(spec, engine(0.0), tp2);
  CHECK_FALSE(one.per_collective_fitted);
  CHECK(one.step.per_collective_s == 0.0);
  CHECK(one.step.fixed_s == doctest::Approx(0.4e-3 + 65 * 60e-6 * 127 / 128).scale(1e-12).epsilon(1e-6));
  // The same 12 runs from a prior holding 60 us: the runs cannot tell it from the fixed work, so it is kept, not
  // dropped, and the fixed work comes back as made (0.4 ms).
  const validate::EngineStepFit held = validate::fit_engine_step(spec, engine(60e-6), tp2);
  CHECK(held.per_collective_from_prior);
  CHECK(held.step.per_collective_s == 60e-6);
  CHECK(held.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
  // Three runs from a prior holding 60 us: kept, the fixed work fitted (per sequence kept too).
  const std::vector<validate::EngineRun> three(tp2.begin(), tp2.begin() + 3);
  const validate::EngineStepFit few = validate::fit_engine_step(spec, engine(60e-6), three);
  CHECK(few.per_sequence_from_prior);
  CHECK(few.step.per_collective_s == 60e-6);
  CHECK(few.step.fixed_s == doctest::Approx(0.4e-3).scale(1e-12).epsilon(1e-6));
}
