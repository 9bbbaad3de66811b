// The planner's expert-parallel choices for MoE models and its time-per-output-token target.
#include <doctest/doctest.h>

#include <algorithm>

#include "treering/model/planner.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

const topologies::Topology& two_h200() {
  static const topologies::Topology topology = topologies::build_topology("dgx-h200", {2, {}});
  return topology;
}

model::Workload v3(int batch) {
  model::Workload w = model::find_workload("deepseek-v3");
  w.batch = batch;
  return w;
}

// The step of `layout` at `batch`, evaluated on its own (a2a: the only combine the EP choices take).
model::StepResult step_of(const model::Layout& layout, int batch) {
  const model::LayoutModel layouts(two_h200(), model::place_layout(two_h200(), layout));
  const model::Workload w = v3(batch);
  const model::LayoutAttention attention = layouts.attention(model::DecodeAlgorithm::a2a, w, 4096);
  return model::evaluate_step(layouts, attention, model::DecodeAlgorithm::a2a, w, 4096, model::Scope::step);
}

}  // namespace

TEST_CASE("deepseek-v3 on 2 DGX H200: the EP choices the planner tries") {
  const model::DeploymentPlan plan = model::plan_deployment(two_h200(), v3(64), 4096, {});
  // EP 8 and 16 (a node and more, dividing 256 experts); each: DP attention, TP 2, 4, 8 x replicas, and DCP inside
  // TP 2 (dcp 2), TP 4 (2, 4), TP 8 (2, 4, 8): 10 layouts, each with 1 and 2 micro-batches: 40 choices.
  int with_experts = 0;
  for (const auto* list : {&plan.ranked, &plan.not_fitting}) {
    for (const model::PlannedLayout& choice : *list) {
      if (choice.layout.experts.ep > 1) {
        ++with_experts;
        CHECK(choice.layout.experts.ep == choice.layout.gpus());
        CHECK(choice.step.experts.has_value());
      }
    }
  }
  CHECK(with_experts == 40);
  // a dense model gets none
  const model::DeploymentPlan dense =
      model::plan_deployment(two_h200(), model::find_workload("llama3.1-70b"), 4096, {});
  CHECK(std::none_of(dense.ranked.begin(), dense.ranked.end(),
                     [](const model::PlannedLayout& c) { return c.layout.experts.ep > 1; }));
}

TEST_CASE("a TPOT target: each choice at the largest batch that meets it, ranked by tokens/s per GPU") {
  model::PlannerOptions options;
  options.tpot_target_s = 0.040;
  const model::DeploymentPlan plan = model::plan_deployment(two_h200(), v3(1), 4096, options);
  REQUIRE(!plan.ranked.empty());
  CHECK(plan.tpot_target_s == doctest::Approx(0.040).scale(1e-12));
  for (size_t i = 0; i < plan.ranked.size(); ++i) {
    const model::PlannedLayout& c = plan.ranked[i];
    CAPTURE(model::layout_name(c.layout));
    CHECK(c.step.step_s <= 0.040);
    CHECK(c.fits);
    // tokens/s per GPU: the replica's batch over the step, over its tp x cp GPUs
    CHECK(c.tokens_per_s_per_gpu ==
          doctest::Approx(c.batch / c.step.step_s / (c.layout.tp * c.layout.cp)).scale(1e-12));
    if (i > 0) CHECK(plan.ranked[i - 1].tokens_per_s_per_gpu >= c.tokens_per_s_per_gpu);
  }
  // the best: one more sequence a GPU (data-parallel attention) or a replica misses the target or does not fit,
  // evaluated on its own
  const model::PlannedLayout& best = plan.ranked.front();
  const int unit = best.layout.attention == model::AttentionParallelism::data ? best.layout.tp : 1;
  CHECK(best.layout.experts.ep > 1);  // spreading the experts wins at this target
  const model::StepResult at = step_of(best.layout, best.batch);
  CHECK(at.step_s == doctest::Approx(best.step.step_s).scale(1e-12));
  const model::StepResult more = step_of(best.layout, best.batch + unit);
  CHECK((more.step_s > 0.040 || more.memory.total > more.memory.capacity));
  // too tight a target: nothing meets it, the too-slow list says how close each came
  options.tpot_target_s = 1e-4;
  const model::DeploymentPlan none = model::plan_deployment(two_h200(), v3(1), 4096, options);
  CHECK(none.ranked.empty());
  REQUIRE(!none.too_slow.empty());
  CHECK(none.too_slow.front().step.step_s <= none.too_slow.back().step.step_s);
}
