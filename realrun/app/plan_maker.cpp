#include "plan_maker.hpp"

#include <numeric>

#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/load.hpp"

namespace treering::realrun::app {
namespace {

topologies::Topology topology_for(const std::string& cluster, int ranks) {
  const topologies::ClusterSpec spec = topologies::load_cluster(cluster);
  const int per_node = spec.groups.front().gpus_per_node;
  return topologies::build_topology(cluster, {(ranks + per_node - 1) / per_node, {}});
}

}  // namespace

PlanMaker::PlanMaker(const std::string& cluster, const std::string& workload, int batch, int ranks, const std::string& backend)
    : topology_(topology_for(cluster, ranks)), workload_(model::find_workload(workload)), options_(plan_options(parse_backend(backend))) {
  if (batch > 0) workload_.batch = batch;
  std::vector<int> gpus(static_cast<size_t>(ranks));
  std::iota(gpus.begin(), gpus.end(), 0);
  model_ = std::make_unique<model::DecodeModel>(topology_, gpus);
}

model::DecodePlan PlanMaker::plan(model::DecodeAlgorithm algorithm, long long seq_len) const {
  return model_->plan(algorithm, workload_, seq_len, options_);
}

}  // namespace treering::realrun::app
