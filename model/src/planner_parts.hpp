// What the planner (planner.cpp) and its expert-parallel and throughput parts (planner_experts.cpp) share.
// Private to model.
#pragma once

#include <vector>

#include "treering/model/planner.hpp"

namespace treering::model::detail {

std::vector<int> powers_of_two_to(int most);

// A choice evaluated at the workload's batch: its step, band, memory, cross-node traffic, tokens/s per GPU.
PlannedLayout evaluate_choice(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload,
                              long long seq_len, const PlannerOptions& options);

// Into the plan: at the workload's batch (ranked or not_fitting), or with a target at the largest batch that meets
// it (ranked; too_slow when none does; not_fitting when one sequence does not fit).
void add_choice(const LayoutModel& layouts, DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                const PlannerOptions& options, DeploymentPlan& plan);

// MoE workloads: the EP choices (planner.hpp) into the plan.
void add_expert_layouts(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                        const PlannerOptions& options, int gpus_max, DeploymentPlan& plan);

// With a target: ranked by tokens/s per GPU (most first), too_slow by time per token.
void rank_by_throughput(DeploymentPlan& plan);

}  // namespace treering::model::detail
