// Where an MoE layer's tokens go under expert parallelism (EP): what each token's top-k routing implies for the
// GPUs and nodes it reaches, and how unevenly a batch loads them. Pure.
//
// Placement: the routed experts spread evenly over `ep` GPUs, contiguously (GPU r holds experts r E/ep ..
// (r+1) E/ep - 1), `gpus_per_node` EP ranks per node; DeepSeek's group-limited routing puts its expert groups
// (n_group) on consecutive GPUs too, so a group spans whole GPUs or a GPU whole groups.
//
// Routing: a token picks k = experts_per_token distinct experts uniformly (the routers are trained to balance;
// every expert equally likely), or, with groups (n_group G, topk_group t), first t of the G groups uniformly, then
// its k experts uniformly among those groups' t E / G. A GPU (node) holding u experts is missed by a token with
// probability C(E - u, k) / C(E, k) (uniform), or, grouped: u inside one group: (1 - t/G) + t/G x C(T - u, k) /
// C(T, k) with T = t E / G; u = h whole groups: sum over the j of them picked (hypergeometric: C(h, j) C(G - h,
// t - j) / C(G, t)) of C(T - j E/G, k) / C(T, k). Worked example, deepseek-v3 (E 256, k 8, G 8, t 4) at EP 64 on
// 8 nodes of 8: a node holds 32 experts = one group: P(miss) = 1/2 + 1/2 x C(96, 8) / C(128, 8) = 0.5 + 0.5 x
// 0.0927 = 0.546, so 8 x 0.454 = 3.63 nodes per token (at most t = 4: what group-limited routing is for), against
// 8 x (1 - C(224, 8) / C(256, 8)) = 5.29 nodes for uniform top-8.
//
// Load: a batch of B tokens per GPU, n = B x ep in all. A GPU receives each token with probability p: its tokens
// are Binomial(n, p), and the most-loaded of ep GPUs receives E[max] = sum_{x >= 0} (1 - F(x)^ep) of them (the
// GPUs taken as independent; their loads are slightly negatively correlated, which makes the true maximum a little
// larger: 1.5 against 1.375 for 2 tokens on 2 GPUs of one expert each, within 1 % at deepseek-v3's EP 64 x 128
// tokens). Each token that reaches a GPU brings k / (ep p) of its copies on average.
// What-if skew: the hottest expert draws `skew` times the mean expert's tokens, so the GPU holding it receives
// 1 + (skew - 1) / u times the mean (u experts a GPU); a redundant replica of it (EPLB's redundant experts, the
// hottest replicated first) halves its excess draw: 1 + (skew / 2 - 1) / u, at least 1.
#pragma once

#include "treering/model/workload.hpp"

namespace treering::model {

struct ExpertPlacement {
  int ep = 1;                 // GPUs holding the routed experts
  int gpus_per_node = 1;      // of them in one node (scale-up domain)
  int redundant_experts = 0;  // replicas of the hottest experts besides the routed ones, spread evenly over the GPUs
  double skew = 1;            // what-if: the hottest expert draws skew x the mean expert's tokens (1: uniform)
};

struct ExpertRouting {
  int ep = 1;
  int nodes = 1;
  bool group_limited = false;          // n_group / topk_group routing
  double experts_per_gpu = 0;          // routed experts a GPU holds, replicas included: (E + redundant) / ep
  double copies_per_token = 0;         // (token, expert) pairs: k
  double gpu_probability = 0;          // that a token reaches a given GPU (any of its experts there)
  double node_probability = 0;         // that it reaches a given node
  double gpus_per_token = 0;           // distinct GPUs a token reaches: ep x gpu_probability
  double nodes_per_token = 0;          // distinct nodes: nodes x node_probability
  double tokens_per_gpu = 0;           // the batch each GPU sends (B)
  double mean_copies_received = 0;     // per GPU: B x k
  double busiest_tokens_received = 0;  // the most-loaded GPU's distinct tokens (expected), skew included
  double busiest_copies_received = 0;  // and their copies
  double busiest_factor = 1;           // busiest / mean copies
  double busiest_experts_touched = 0;  // experts of the busiest GPU its copies touch (the weights it reads)
};

// Throws topologies::InputError for a workload without routed experts, ep below 1, gpus_per_node not dividing
// ep, experts (plus redundant ones) not splitting evenly over ep, a grouped placement that splits a group over
// GPUs unevenly, skew below 1 or tokens_per_gpu below 0.
ExpertRouting expert_routing(const Workload& workload, const ExpertPlacement& placement, int tokens_per_gpu);

// The expected maximum of `units` independent Binomial(trials, probability) counts:
// sum_{x >= 0} (1 - F(x)^units). Example: 2 units, 2 trials, 1/2: F(0) = 1/4, F(1) = 3/4:
// (1 - 1/16) + (1 - 9/16) = 1.375.
double expected_binomial_maximum(long long trials, double probability, int units);

// The probability that a token's routing misses a unit holding `unit_experts` of the workload's routed experts
// (uniform or group-limited, as above).
double routing_miss_probability(const Workload& workload, double unit_experts);

}  // namespace treering::model
