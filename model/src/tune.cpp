#include "treering/model/tune.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "treering/model/extrapolation.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {

std::string Strategy::describe() const {
  std::string text = to_string(algorithm);
  if (algorithm == DecodeAlgorithm::tree_lse) {
    const auto fan = [](int f) { return f <= 1 ? std::string("all") : std::to_string(f); };
    text +=
        ", fan-in " + fan(options.tree_fan_in_domain) + " in a node, " + fan(options.tree_fan_in_network) + " across";
  } else if (options.collective_algorithm) {
    text += std::string(", every collective as ") + to_string(*options.collective_algorithm);
  } else if (algorithm != DecodeAlgorithm::ring) {
    text += ", NCCL's pick";
  }
  if (leader > 0) text += ", leader GPU " + std::to_string(leader);
  return text;
}

std::vector<int> rotated_gpus(const topologies::Topology& topology, std::vector<int> gpus, int leader) {
  if (gpus.empty()) {
    gpus.resize(static_cast<size_t>(topology.gpu_count()));
    std::iota(gpus.begin(), gpus.end(), 0);
  }
  for (size_t start = 0; start < gpus.size();) {  // each run of GPUs of one node, in list order
    size_t end = start;
    while (end < gpus.size() && topology.node_of_gpu(gpus[end]) == topology.node_of_gpu(gpus[start])) ++end;
    const size_t count = end - start;
    std::rotate(gpus.begin() + static_cast<long>(start),
                gpus.begin() + static_cast<long>(start + static_cast<size_t>(leader) % count),
                gpus.begin() + static_cast<long>(end));
    start = end;
  }
  return gpus;
}

std::vector<Strategy> strategies_to_try(const topologies::Topology& topology, const std::vector<int>& gpus) {
  std::vector<Strategy> list{{DecodeAlgorithm::tree, {}, 0}, {DecodeAlgorithm::ring, {}, 0}};
  const std::vector<CollectiveAlgorithm> forced{
      CollectiveAlgorithm::ring,           CollectiveAlgorithm::tree,         CollectiveAlgorithm::nvls,
      CollectiveAlgorithm::nvls_tree,      CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::recursive_doubling,
      CollectiveAlgorithm::collnet_direct, CollectiveAlgorithm::collnet_chain};
  for (DecodeAlgorithm algorithm :
       {DecodeAlgorithm::tree, DecodeAlgorithm::tree_fused, DecodeAlgorithm::allgather_merge}) {
    if (algorithm != DecodeAlgorithm::tree) list.push_back({algorithm, {}, 0});
    for (CollectiveAlgorithm collective : forced) {
      Strategy s{algorithm, {}, 0};
      s.options.collective_algorithm = collective;
      list.push_back(s);
    }
  }
  int most_per_node = 1;  // GPUs of one node in the list
  {
    std::map<int, int> per_node;
    for (int gpu : gpus.empty() ? rotated_gpus(topology, {}, 0) : gpus)
      most_per_node = std::max(most_per_node, ++per_node[topology.node_of_gpu(gpu)]);
  }
  for (int leader = 0; leader < std::min(most_per_node, 8); ++leader) {
    for (int inside : {0, 2, 4, 8}) {
      for (int across : {2, 4, 8, 16}) {
        Strategy s{DecodeAlgorithm::tree_lse, {}, leader};
        s.options.tree_fan_in_domain = inside;
        s.options.tree_fan_in_network = across;
        list.push_back(s);
      }
    }
  }
  return list;
}

std::vector<TunedStrategy> tune(const topologies::Topology& topology, const Workload& workload, long long seq_len,
                                const std::vector<int>& gpus, const PlanOptions& base) {
  std::map<int, std::unique_ptr<DecodeModel>> models;  // per leader
  std::vector<TunedStrategy> tuned;
  for (Strategy strategy : strategies_to_try(topology, gpus)) {
    strategy.options.split = base.split;  // the caller's split and implementation, under every strategy
    strategy.options.impl = base.impl;
    auto& model = models[strategy.leader];
    if (!model)
      model = std::make_unique<DecodeModel>(
          topology, strategy.leader == 0 ? gpus : rotated_gpus(topology, gpus, strategy.leader));
    try {
      TunedStrategy t{strategy, model->predict(strategy.algorithm, workload, seq_len, strategy.options)};
      if (topology.spec().calibration) {
        t.extrapolated =
            !extrapolations(topology, model->plan(strategy.algorithm, workload, seq_len, strategy.options)).empty();
      }
      tuned.push_back(std::move(t));
    } catch (const topologies::InputError& error) {
      if (error.located()) throw;  // a file's error (the implementation profile's), not this strategy's
      // A forced collective algorithm this group cannot run (NVLS without in-switch reduction, recursive
      // doubling on a count that is not a power of two): not a strategy here.
    }
  }
  std::stable_sort(tuned.begin(), tuned.end(), [](const TunedStrategy& a, const TunedStrategy& b) {
    return a.result.latency_s < b.result.latency_s;
  });
  return tuned;
}

std::vector<StrategyBand> strategy_bands(const topologies::Topology& topology, const std::vector<TunedStrategy>& tuned,
                                         const topologies::ImplProfile& profile) {
  std::vector<StrategyBand> bands;
  for (const TunedStrategy& t : tuned) {
    StrategyBand b;
    b.errors = prediction_errors(topology, profile, t.extrapolated);
    b.band = latency_band(t.result, b.errors);
    b.within_best_band = bands_overlap(b.band, bands.empty() ? b.band : bands.front().band);
    bands.push_back(std::move(b));
  }
  return bands;
}

}  // namespace treering::model
