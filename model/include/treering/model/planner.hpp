// The deployment planner: every feasible layout (tp x cp on the cluster's first GPUs) and combine, ranked by
// time per output token (step.hpp), with memory headroom, the longest context each fits, and which choices
// lie within the best one's error band. Pure.
//
// Tried: tp a power of two that splits the heads (head_slice), cp a power of two or what fills the GPUs up,
// tp x cp at most `gpus_max`; with cp 1 there is nothing to combine (plain tensor parallelism, `tp_only`),
// else every combine of `combines`. The paper's layout (tp 1, cp = all GPUs, tree) and plain TP are among
// them, so the top choice is never slower than either.
#pragma once

#include <string>
#include <vector>

#include "treering/model/step.hpp"
#include "treering/model/uncertainty.hpp"

namespace treering::model {

struct PlannerOptions {
  int gpus_max = 0;                         // 0: all the cluster's GPUs
  std::vector<DecodeAlgorithm> combines;    // empty: all_decode_algorithms()
  PlanOptions plan;                         // the implementation (--impl) and split
  RelativeErrors errors;                    // for the bands (uncertainty.hpp)
};

struct PlannedLayout {
  Layout layout;
  DecodeAlgorithm algorithm = DecodeAlgorithm::tree;  // a2a when tp_only (one CP rank: it only attends)
  bool tp_only = false;
  LayoutAttention attention;
  StepResult step;
  Band band;                      // of step_s: the attention's exposed and the TP communication vs the rest
  double network_latency_s = 0;   // of step_s: communication across nodes at latency-bound sizes (its band's widest part)
  bool fits = true;               // weights, KV cache and buffers within every GPU's memory
  bool within_best_band = false;  // its band meets the best one's: the model cannot tell them apart
  std::string extrapolation;      // where it leaves the cluster's calibration (extrapolation.hpp; empty: inside it,
                                  // or no calibration): its combine's plan and its TP collectives
};

struct DeploymentPlan {
  std::vector<PlannedLayout> ranked;      // those that fit, fastest first
  std::vector<PlannedLayout> not_fitting; // by how much they need
  std::vector<std::string> skipped;       // layouts that cannot split the workload, with the reason
};

DeploymentPlan plan_deployment(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                               const PlannerOptions& options);

// The band of a step: its communication (the attention's exposed communication, layers times, and the TP
// collectives) with the communication error, the rest with the compute error.
Band step_band(const StepResult& step, const DecodeResult& attention, int layers, const RelativeErrors& errors);
// The part of step_s that is communication across nodes at latency-bound sizes: each layer's attention's and the
// TP collectives' (StepBreakdown::tp_network_latency_s).
double step_network_latency_s(const StepResult& step, const DecodeResult& attention, int layers);

}  // namespace treering::model
