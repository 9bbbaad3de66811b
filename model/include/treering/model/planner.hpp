// The deployment planner: every feasible layout (tp x cp on the cluster's first GPUs) and combine, ranked by
// time per output token (step.hpp), with memory headroom, the longest context each fits, and which choices
// lie within the best one's error band. Pure.
//
// Ranked by the bands, not the bare figures: the choices whose band meets the fastest one's are a tie within
// the model's uncertainty, and come first ordered by how much of the prediction crosses nodes (the seconds of
// communication across nodes, then the cross-node calls and bytes: least first), as communication across nodes is what
// the model predicts least well (TP across nodes: 20-42 % low against Meta's published Llama 3.1 405B decode, README
// "Deployed decode"); the rest follow, fastest first.
//
// Tried: tp a power of two that splits the heads (head_slice), cp a power of two or what fills the GPUs up,
// tp x cp at most `gpus_max`; with cp 1 there is nothing to combine (plain tensor parallelism, `tp_only`),
// else every combine of `combines`. The paper's layout (tp 1, cp = all GPUs, tree) and plain TP are among
// them, so the top choice is never slower than either. Latent-attention workloads (workload.hpp) also try the engines'
// layouts inside a TP group of tp (a power of two): decode context parallelism (dcp 2 .. tp, powers of two, every
// combine that leaves every head on the TP group) and data-parallel attention (layout.hpp); each choice then says,
// in `why`, what it gains or loses against plain tensor parallelism over as many GPUs: KV cache per GPU and the longest
// context (memory), the attention's communication and its compute per layer, and the time per token.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/model/step.hpp"
#include "treering/model/uncertainty.hpp"

namespace treering::model {

// MoE workloads also try expert parallelism (expert_layout.hpp) over EP = e GPUs, e a power of two from a node's
// GPUs (or 2) to gpus_max that splits the experts: data-parallel attention over the e GPUs; TP attention of t GPUs
// (2 .. a node's, powers of two) x e / t replicas; latent attention's TP t with DCP d (a2a) x e / t replicas; each with
// one and with two micro-batches, the exchanges by `experts.kernel`.
//
// A time-per-output-token target (tpot_target_s, AIConfigurator's question: how much throughput at this latency?)
// evaluates every choice at the largest batch that meets it and fits (per replica; data-parallel attention in whole
// sequences a GPU), by doubling then bisection, and ranks them by output tokens per second per GPU; a choice that
// misses it even at one sequence (a GPU each with data-parallel attention) is set apart.
struct PlannerOptions {
  int gpus_max = 0;                       // 0: all the cluster's GPUs
  std::vector<DecodeAlgorithm> combines;  // empty: all_decode_algorithms()
  PlanOptions plan;                       // the implementation (--impl) and split
  RelativeErrors errors;                  // for the bands (uncertainty.hpp)
  ExpertLayout experts;                 // the EP choices' kernel, redundant experts and skew (ep, micro-batches: tried)
  std::optional<double> tpot_target_s;  // see above
};

// What a step sends across scale-up domains (nodes). time_s: the part of step_s that is communication across
// them (the combine's exposed inter-node time each layer, and the TP collectives when their group spans domains).
// calls: the communication calls a token waits on that cross
// them, one group's (the groups run at once): the combine's collectives and point-to-point phases in each layer
// (when its CP group spans domains) and the TP group's two all-reduces a layer plus the logits' all-gather (when
// it spans them), and with expert parallelism across nodes each MoE layer's dispatch and combine (per micro-batch).
// bytes: all groups together, through the NICs: the combine's inter-node volume, the exchanges' NIC bytes, and a ring's
// for each TP collective (NCCL's ring: each of the k edges between domains carries 2 (p - 1) / p of an all-reduce's
// bytes, (p - 1) / p of an all-gather's output). Example: llama3.1-70b at tp 16 on 2 DGX H100, batch 1: 2 x 80 + 1
// = 161 calls; each all-reduce of 16 KiB puts 2 x 2 x 15/16 x 16 KiB = 60 KiB across, 80 x 2 x 60 KiB = 9,600 KiB a
// step, plus the logits' all-gather (128,256 x 2 B: 2 x 15/16 x 250.5 KiB = 470 KiB).
struct CrossNodeTraffic {
  double time_s = 0;
  long long calls = 0;
  double bytes = 0;
};

struct PlannedLayout {
  Layout layout;
  DecodeAlgorithm algorithm = DecodeAlgorithm::tree;  // a2a when tp_only (one CP rank: it only attends)
  bool tp_only = false;
  LayoutAttention attention;
  StepResult step;
  Band band;  // of step_s: the attention's exposed and the TP communication vs the rest
  double network_latency_s =
      0;             // of step_s: communication across nodes at latency-bound sizes (its band's widest part)
  bool fits = true;  // weights, KV cache and buffers within every GPU's memory
  bool within_best_band = false;    // its band meets the fastest one's: the model cannot tell them apart (a tie)
  CrossNodeTraffic cross_node;      // what orders a tie
  std::string extrapolation;        // where it leaves the cluster's calibration (extrapolation.hpp; empty: inside it,
                                    // or no calibration): its combine's plan and its TP collectives
  std::string why;                  // latent attention: against plain TP on as many GPUs (versus_tensor_parallel)
  int batch = 0;                    // the batch it was evaluated at (per replica): the workload's, or the target's best
  double tokens_per_s_per_gpu = 0;  // output tokens a second over the GPUs of a replica (tp x cp)
};

// What `choice` gains or loses against `tp` (plain tensor parallelism on as many GPUs), in words: memory (KV cache
// per GPU, the longest context), the attention's communication and compute per layer, the time per token. Example:
// "vs tp 8: KV cache 1.12 GB/GPU vs 8.99 GB (max context 6.38M vs 798k tokens; 49 vs 5 sequences of this length);
// attention 37.2 us a layer vs 37.3 us
// (communication 24.4 us vs 0 s, compute 12.8 us vs 37.3 us); 7.39 ms a token vs 7.39 ms".
std::string versus_tensor_parallel(const PlannedLayout& choice, const PlannedLayout& tp);

struct DeploymentPlan {
  std::vector<PlannedLayout> ranked;       // those that fit: the tie with the fastest (within_best_band) first,
                                           // fewest cross-node calls and bytes first, then the rest fastest first;
                                           // with a target: those that meet it, most tokens/s per GPU first
  std::vector<PlannedLayout> not_fitting;  // by how much they need
  std::vector<PlannedLayout> too_slow;     // with a target: missing it at the smallest batch, fastest first
  std::vector<std::string> skipped;        // layouts that cannot split the workload, with the reason
  std::optional<double> tpot_target_s;
};

DeploymentPlan plan_deployment(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                               const PlannerOptions& options);

// The fastest choice that fits (by step_s), or nullptr when none does.
const PlannedLayout* fastest_choice(const DeploymentPlan& plan);

// A step's traffic across domains (CrossNodeTraffic) for a choice evaluated on `layouts`.
CrossNodeTraffic cross_node_traffic(const LayoutModel& layouts, const PlannedLayout& choice, const Workload& workload,
                                    long long seq_len, const PlanOptions& options);

// The band of a step: its communication (the attention's exposed communication, layers times, the TP
// collectives, and the EP exchanges not hidden by micro-batches) with the communication error, the rest with the
// compute error.
Band step_band(const StepResult& step, const DecodeResult& attention, int layers, const RelativeErrors& errors);
// The part of step_s that is communication across nodes at latency-bound sizes: each layer's attention's and the
// TP collectives' (StepBreakdown::tp_network_latency_s).
double step_network_latency_s(const StepResult& step, const DecodeResult& attention, int layers);

}  // namespace treering::model
