// The planner's expert-parallel choices and its time-per-output-token target (planner.hpp).
#include <algorithm>

#include "planner_parts.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model::detail {
namespace {

// Sequences a replica's batch grows by: one a GPU with data-parallel attention, else one.
int batch_unit(const Layout& layout) { return layout.attention == AttentionParallelism::data ? layout.tp : 1; }

// The most sequences the search tries per replica (a bound for layouts whose step hardly grows with the batch).
constexpr int kMostSequences = 1 << 16;

struct Probe {
  bool meets = false;  // fits and meets the target
  bool fits = false;
  PlannedLayout choice;
};

Probe probe(const LayoutModel& layouts, DecodeAlgorithm algorithm, Workload workload, int batch, long long seq_len,
            const PlannerOptions& options) {
  workload.batch = batch;
  Probe p;
  p.choice = evaluate_choice(layouts, algorithm, workload, seq_len, options);
  p.fits = p.choice.fits;
  p.meets = p.fits && p.choice.step.step_s <= *options.tpot_target_s;
  return p;
}

}  // namespace

void add_choice(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                const PlannerOptions& options, DeploymentPlan& plan) {
  if (!options.tpot_target_s) {
    PlannedLayout choice = evaluate_choice(layouts, algorithm, workload, seq_len, options);
    (choice.fits ? plan.ranked : plan.not_fitting).push_back(std::move(choice));
    return;
  }
  // the largest batch (in units) that meets the target: double while it does, then bisect
  const int unit = batch_unit(layouts.groups().layout);
  Probe best = probe(layouts, algorithm, workload, unit, seq_len, options);
  if (!best.meets) {
    (best.fits ? plan.too_slow : plan.not_fitting).push_back(std::move(best.choice));
    return;
  }
  int good = 1, bad = 0;  // in units
  while (bad == 0 && good * 2 * unit <= kMostSequences) {
    Probe next = probe(layouts, algorithm, workload, good * 2 * unit, seq_len, options);
    if (!next.meets) {
      bad = good * 2;
    } else {
      good *= 2;
      best = std::move(next);
    }
  }
  while (bad > good + 1) {
    const int middle = good + (bad - good) / 2;
    Probe next = probe(layouts, algorithm, workload, middle * unit, seq_len, options);
    if (next.meets) {
      good = middle;
      best = std::move(next);
    } else {
      bad = middle;
    }
  }
  plan.ranked.push_back(std::move(best.choice));
}

void add_expert_layouts(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                        const PlannerOptions& options, int gpus_max, DeploymentPlan& plan) {
  const int node_gpus = topology.node(0).gpus;
  for (int ep : powers_of_two_to(gpus_max)) {
    if (ep < std::min(std::max(2, node_gpus), gpus_max) || workload.experts % ep != 0) continue;
    std::vector<Layout> layouts{Layout{ep, 1, 1, AttentionParallelism::data}};
    for (int tp = 2; tp <= std::min(node_gpus, ep); tp *= 2) {
      try {
        head_slice(workload, tp);
      } catch (const topologies::InputError&) {
        continue;
      }
      layouts.push_back(Layout{tp, 1, ep / tp});
      for (int dcp = 2; dcp <= tp && has_latent_attention(workload); dcp *= 2)
        layouts.push_back(Layout{tp / dcp, dcp, ep / tp, AttentionParallelism::decode_context});
    }
    for (Layout layout : layouts) {
      for (int micro_batches : {1, 2}) {
        layout.experts = options.experts;
        layout.experts.ep = ep;
        layout.experts.micro_batches = micro_batches;
        const LayoutModel model(topology, place_layout(topology, layout));
        add_choice(model, DecodeAlgorithm::a2a, workload, seq_len, options, plan);
      }
    }
  }
}

void rank_by_throughput(DeploymentPlan& plan) {
  std::stable_sort(plan.ranked.begin(), plan.ranked.end(), [](const PlannedLayout& a, const PlannedLayout& b) {
    return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
  });
  std::stable_sort(plan.too_slow.begin(), plan.too_slow.end(),
                   [](const PlannedLayout& a, const PlannedLayout& b) { return a.step.step_s < b.step.step_s; });
}

}  // namespace treering::model::detail
