// The deployment planner: its top choice against plain TP and the paper's layout evaluated on their own, and
// what it tries and skips.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "treering/model/planner.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

// Time per output token of one layout and combine, or infinity when it does not fit (or cannot split).
double step_s(const topologies::Topology& topology, model::Layout layout, DecodeAlgorithm algorithm, const model::Workload& w,
              long long seq_len) {
  try {
    const model::LayoutModel layouts(topology, model::place_layout(topology, layout));
    const model::LayoutAttention attention = layouts.attention(algorithm, w, seq_len);
    const model::StepResult step = model::evaluate_step(layouts, attention, algorithm, w, seq_len, model::Scope::step);
    return step.memory.total <= step.memory.capacity ? step.step_s : std::numeric_limits<double>::infinity();
  } catch (const std::invalid_argument&) {
    return std::numeric_limits<double>::infinity();
  }
}

// The best of plain TP (tp = 1, 2, 4, ... GPUs, no CP) and the paper's layout (the K/V over all GPUs, tree).
double best_baseline_s(const topologies::Topology& topology, const model::Workload& w, long long seq_len) {
  double best = step_s(topology, model::Layout{1, topology.gpu_count()}, DecodeAlgorithm::tree, w, seq_len);
  for (int tp = 1; tp <= topology.gpu_count(); tp *= 2) best = std::min(best, step_s(topology, {tp, 1}, DecodeAlgorithm::a2a, w, seq_len));
  return best;
}

void check_never_slower(const topologies::Topology& topology, const model::Workload& w, long long seq_len) {
  CAPTURE(w.name);
  CAPTURE(seq_len);
  const model::DeploymentPlan plan = model::plan_deployment(topology, w, seq_len, {});
  REQUIRE_FALSE(plan.ranked.empty());
  const double baseline_s = best_baseline_s(topology, w, seq_len);
  CHECK(plan.ranked.front().step.step_s <= baseline_s * (1 + 1e-12));
  CHECK(plan.ranked.front().within_best_band);
  for (size_t i = 1; i < plan.ranked.size(); ++i) CHECK(plan.ranked[i - 1].step.step_s <= plan.ranked[i].step.step_s);
  for (const model::PlannedLayout& c : plan.ranked) CHECK(c.step.memory.total <= c.step.memory.capacity);
  for (const model::PlannedLayout& c : plan.not_fitting) CHECK(c.step.memory.total > c.step.memory.capacity);
}

}  // namespace

TEST_CASE("the top choice is never slower than the best of plain TP and the paper's tree") {
  const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  for (const char* name : {"llama3.1-8b", "llama3.1-70b", "mixtral-8x7b"}) {
    for (long long seq_len : {4096LL, 131072LL, 1048576LL}) check_never_slower(two, model::find_workload(name), seq_len);
  }
  model::Workload batched = model::find_workload("llama3.1-70b");
  batched.batch = 8;
  check_never_slower(two, batched, 131072);
  const topologies::Topology eight = topologies::build_topology("dgx-h100", {8, {}});
  check_never_slower(eight, model::find_workload("llama3.1-405b-fp8"), 131072);
}

TEST_CASE("the planner tries every tp that splits the heads, and says why it skips the others") {
  const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  const model::DeploymentPlan plan = model::plan_deployment(two, model::find_workload("llama3.1-8b"), 32768, {});
  // 16 GPUs: tp 1, 2, 4, 8, 16 x cp 1 .. 16 / tp (powers of two): 5 + 4 + 3 + 2 + 1 = 15 layouts; cp 1 (5 of
  // them) has nothing to combine, the other 10 try all 8 combines: 5 + 80 = 85 choices.
  CHECK(plan.ranked.size() + plan.not_fitting.size() == 85);
  CHECK(plan.skipped.empty());
  model::PlannerOptions options;
  options.gpus_max = 12;  // cp 3 at tp 4 fills 12 GPUs; tp 8 splits 8 of them once (cp 1)
  options.combines = {DecodeAlgorithm::tree};
  const model::DeploymentPlan limited = model::plan_deployment(two, model::find_workload("paper-mha16"), 32768, options);
  for (const model::PlannedLayout& c : limited.ranked) CHECK(c.layout.gpus() <= 12);
  const auto has = [&](int tp, int cp) {
    return std::any_of(limited.ranked.begin(), limited.ranked.end(),
                       [&](const model::PlannedLayout& c) { return c.layout.tp == tp && c.layout.cp == cp; });
  };
  CHECK(has(4, 3));
  CHECK(has(1, 12));
  CHECK(has(8, 1));
}

TEST_CASE("the planner says how much of each choice is communication across nodes at latency-bound sizes") {
  // One node: nothing crosses. Two nodes: TP 16 all-reduces the hidden state of llama3.1-70b (8192 x 2 B =
  // 16 KiB, tree/LL: ~30 us of latency against under a microsecond of transfer) across them in every layer, so
  // those all-reduces count; layouts inside one node count nothing.
  const model::Workload w = model::find_workload("llama3.1-70b");
  const model::DeploymentPlan one = model::plan_deployment(topologies::build_topology("dgx-h100", {1, {}}), w, 32768, {});
  for (const model::PlannedLayout& c : one.ranked) CHECK(c.network_latency_s == 0);
  const model::DeploymentPlan two = model::plan_deployment(topologies::build_topology("dgx-h100", {2, {}}), w, 32768, {});
  bool seen = false;
  for (const model::PlannedLayout& c : two.ranked) {
    if (c.layout.tp != 16) continue;
    seen = true;
    CHECK(c.network_latency_s >= 2 * w.layers * 25e-6);  // at least 2 all-reduces of >= 25 us per layer
    CHECK(c.network_latency_s <= c.step.breakdown.tp_communication_s);
  }
  CHECK(seen);
}
