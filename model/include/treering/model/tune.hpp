// Tuning the combine: every strategy the search covers, timed by the model on one cluster, workload and
// context length, fastest first. Pure.
//
// The search covers (about 200 strategies on a DGX H100 cluster, ~7 us each):
// - ring, with the transfers beside the attention (the paper's);
// - tree, tree-fused and allgather-merge with NCCL's pick per collective, or every collective forced to one
//   algorithm (ring, tree, NVLS, NVLS-tree, hierarchical, recursive doubling; those that cannot run here are
//   left out), the protocol being the fastest for it;
// - tree-lse with fan-ins 0 (flat), 2, 4, 8 inside a node and 2, 4, 8, 16 across nodes, and each of a node's
//   first 8 GPUs as its leader (the GPUs of every node rotated so that one comes first).
#pragma once

#include <string>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/model/uncertainty.hpp"

namespace treering::model {

struct Strategy {
  DecodeAlgorithm algorithm = DecodeAlgorithm::tree;
  PlanOptions options;
  int leader = 0;  // the GPU of each node that comes first (tree-lse's leader, the ring's entry); 0: as listed
  std::string describe() const;  // "tree-lse, fan-in 4 in a node, 2 across, leader GPU 3"
};

struct TunedStrategy {
  Strategy strategy;
  DecodeResult result;
  bool extrapolated =
      false;  // on a calibrated cluster: its plan leaves what the calibration measured (extrapolation.hpp)
};

// The search's strategies in a fixed order (the paper's tree and ring first).
std::vector<Strategy> strategies_to_try(const topologies::Topology& topology, const std::vector<int>& gpus);

// Each strategy evaluated (those the cluster cannot run left out), fastest first; equal latencies keep the
// order of strategies_to_try. `gpus` as DecodeModel takes them (all, node by node, when empty). Every strategy
// runs with `base`'s split and implementation profile.
std::vector<TunedStrategy> tune(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                                const std::vector<int>& gpus = {}, const PlanOptions& base = {});

// How sure the ranking is: each strategy's latency band (uncertainty.hpp) with `profile`'s errors (on a calibrated
// cluster, doubled for a strategy that extrapolates), and whether it meets the band of the best (the first: its
// own is met). The two bands are taken as independent, which is cautious: the model errs the same way on two
// strategies that share most of their work.
// Example, both errors 10 %: best 100 us [100 / 1.1, 100 / 0.9] = [90.9, 111.1]; 120 us [109.1, 133.3] is within
// its band, 125 us [113.6, 138.9] is not: within iff latency / best <= 1.1 / 0.9 = 1.22.
struct StrategyBand {
  Band band;
  RelativeErrors errors;
  bool within_best_band = false;
};
std::vector<StrategyBand> strategy_bands(const topologies::Topology& topology, const std::vector<TunedStrategy>& tuned,
                                         const topologies::ImplProfile& profile);

// `gpus` (all when empty) with every node's GPUs rotated left by `leader` (modulo the node's GPUs in the list):
// leader 1 turns 0 1 2 3 | 4 5 6 7 into 1 2 3 0 | 5 6 7 4.
std::vector<int> rotated_gpus(const topologies::Topology& topology, std::vector<int> gpus, int leader);

}  // namespace treering::model
