// The deployment planner: its top choice against plain TP and the paper's layout evaluated on their own, and
// what it tries and skips.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "treering/model/planner.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

// Time per output token of one layout and combine, or infinity when it does not fit (or cannot split).
double step_s(const topologies::Topology& topology, model::Layout layout, DecodeAlgorithm algorithm,
              const model::Workload& w, long long seq_len) {
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
  for (int tp = 1; tp <= topology.gpu_count(); tp *= 2)
    best = std::min(best, step_s(topology, {tp, 1}, DecodeAlgorithm::a2a, w, seq_len));
  return best;
}

// The ranking: the tie with the fastest (within_best_band) first, by cross-node time, calls, bytes; then the
// rest by time.
void check_tie_first(const model::DeploymentPlan& plan) {
  for (size_t i = 1; i < plan.ranked.size(); ++i) {
    const model::PlannedLayout& a = plan.ranked[i - 1];
    const model::PlannedLayout& b = plan.ranked[i];
    CAPTURE(i);
    CHECK((a.within_best_band || !b.within_best_band));
    if (a.within_best_band && b.within_best_band)
      CHECK(a.cross_node.time_s <= b.cross_node.time_s);
    else if (!a.within_best_band) {
      CHECK(a.step.step_s <= b.step.step_s);
    }
  }
}

void check_never_slower(const topologies::Topology& topology, const model::Workload& w, long long seq_len) {
  CAPTURE(w.name);
  CAPTURE(seq_len);
  const model::DeploymentPlan plan = model::plan_deployment(topology, w, seq_len, {});
  REQUIRE_FALSE(plan.ranked.empty());
  const double baseline_s = best_baseline_s(topology, w, seq_len);
  const model::PlannedLayout* fastest = model::fastest_choice(plan);
  REQUIRE(fastest != nullptr);
  CHECK(fastest->step.step_s <= baseline_s * (1 + 1e-12));
  CHECK(fastest->within_best_band);
  CHECK(plan.ranked.front().within_best_band);
  check_tie_first(plan);
  for (const model::PlannedLayout& c : plan.ranked) CHECK(c.step.memory.total <= c.step.memory.capacity);
  for (const model::PlannedLayout& c : plan.not_fitting) CHECK(c.step.memory.total > c.step.memory.capacity);
}

}  // namespace

TEST_CASE("the top choice is never slower than the best of plain TP and the paper's tree") {
  const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  for (const char* name : {"llama3.1-8b", "llama3.1-70b", "mixtral-8x7b"}) {
    for (long long seq_len : {4096LL, 131072LL, 1048576LL})
      check_never_slower(two, model::find_workload(name), seq_len);
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
  const model::DeploymentPlan limited =
      model::plan_deployment(two, model::find_workload("paper-mha16"), 32768, options);
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
  const model::DeploymentPlan one =
      model::plan_deployment(topologies::build_topology("dgx-h100", {1, {}}), w, 32768, {});
  for (const model::PlannedLayout& c : one.ranked) CHECK(c.network_latency_s == 0);
  const model::DeploymentPlan two =
      model::plan_deployment(topologies::build_topology("dgx-h100", {2, {}}), w, 32768, {});
  bool seen = false;
  for (const model::PlannedLayout& c : two.ranked) {
    if (c.layout.tp != 16) continue;
    seen = true;
    CHECK(c.network_latency_s >= 2 * w.layers * 25e-6);  // at least 2 all-reduces of >= 25 us per layer
    CHECK(c.network_latency_s <= c.step.breakdown.tp_communication_s);
  }
  CHECK(seen);
}

TEST_CASE("a step's traffic across nodes: TP 16 over two DGX H100 nodes, by hand") {
  // llama3.1-70b, batch 1, tp 16 x cp 1 on 2 nodes: 2 x 80 all-reduces of the hidden state (8192 x 2 B = 16,384 B)
  // and one all-gather of the logits (128,256 x 2 B = 256,512 B), all across the two nodes. NCCL's ring puts
  // 2 x 15/16 of an all-reduce's bytes on each of its 2 edges between the nodes: 2 x 2 x 15/16 x 16,384 = 61,440 B;
  // the all-gather 2 x 15/16 x 256,512 = 480,960 B. Step: 160 x 61,440 + 480,960 = 10,311,360 B in 161 calls.
  const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  const model::Workload w = model::find_workload("llama3.1-70b");
  const model::DeploymentPlan plan = model::plan_deployment(two, w, 32768, {});
  bool seen = false;
  for (const model::PlannedLayout& c : plan.ranked) {
    if (c.layout.tp == 16 && c.tp_only) {
      seen = true;
      CHECK(c.cross_node.calls == 161);
      CHECK(c.cross_node.bytes == doctest::Approx(10311360.0).epsilon(1e-12).scale(1.0));
    }
    if (c.layout.tp <= 8 && c.layout.cp == 1) CHECK(c.cross_node.calls == 0);  // inside one node
  }
  CHECK(seen);
}

TEST_CASE("llama3.1-405b on 16 DGX H100: a tie within the bands comes first, least time across nodes first") {
  // Every layout that fits crosses nodes (tp >= 16 for 810 GB of bf16 weights on 80 GB GPUs); the fastest by the
  // bare figure is TP 64 across 8 nodes (253 cross-node calls a step: 2 x 126 all-reduces and the logits'
  // all-gather, most of its time), but layouts whose bands meet it and that spend less time across nodes rank
  // before it: TP 16 over 2 nodes first (the same 253 calls, each over 2 nodes, not 8).
  const topologies::Topology sixteen = topologies::build_topology("dgx-h100", {16, {}});
  model::PlannerOptions options;  // the bands `plan` draws: the default implementation's errors
  options.errors = model::prediction_errors(sixteen, topologies::default_impl_profile(), false);
  const model::DeploymentPlan plan =
      model::plan_deployment(sixteen, model::find_workload("llama3.1-405b"), 128000, options);
  check_tie_first(plan);
  const model::PlannedLayout* fastest = model::fastest_choice(plan);
  REQUIRE(fastest != nullptr);
  CHECK(fastest->cross_node.calls == 2 * 126 + 1);
  CHECK(plan.ranked.front().within_best_band);
  CHECK(plan.ranked.front().layout.tp == 16);
  CHECK(plan.ranked.front().tp_only);
  CHECK(plan.ranked.front().cross_node.time_s < fastest->cross_node.time_s);
}
