#include "plan_maker.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include "treering/model/workload.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/realrun/mla_run.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {
namespace {

topologies::Topology topology_for(const std::string& cluster, int ranks) {
  const topologies::ClusterSpec spec = topologies::load_cluster(cluster);
  const int per_node = spec.groups.front().gpus_per_node;
  return topologies::build_topology(cluster, {(ranks + per_node - 1) / per_node, {}});
}

// NCCL reads NCCL_ALGO when a communicator is made; a single algorithm named there is what every collective of the
// job runs, so the plan is made with it. Names as NCCL's (any case): Ring, Tree, NVLS, NVLSTree, CollnetDirect,
// CollnetChain.
std::optional<model::CollectiveAlgorithm> nccl_algo_from_environment() {
  const char* value = std::getenv("NCCL_ALGO");
  if (value == nullptr || *value == 0) return std::nullopt;
  std::string name(value);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name == "ring") return model::CollectiveAlgorithm::ring;
  if (name == "tree") return model::CollectiveAlgorithm::tree;
  if (name == "nvls") return model::CollectiveAlgorithm::nvls;
  if (name == "nvlstree") return model::CollectiveAlgorithm::nvls_tree;
  if (name == "collnetdirect") return model::CollectiveAlgorithm::collnet_direct;
  if (name == "collnetchain") return model::CollectiveAlgorithm::collnet_chain;
  throw topologies::InputError(
      "NCCL_ALGO=" + std::string(value) +
      ": the plan follows a single algorithm NCCL_ALGO names (Ring, Tree, NVLS, NVLSTree, CollnetDirect or "
      "CollnetChain); unset it to let NCCL "
      "pick, as the model predicts");
}

}  // namespace

PlanMaker::PlanMaker(const std::string& cluster, const std::string& workload, int batch, int ranks,
                     model::RealrunBackend backend)
    : topology_(topology_for(cluster, ranks)),
      workload_(model::find_workload(workload)),
      options_(plan_options(backend)) {
  if (batch > 0) workload_.batch = batch;
  planned_ = latent() ? combine_workload(workload_) : workload_;
  if (backend == model::RealrunBackend::cuda) {
    if (const auto forced = nccl_algo_from_environment()) options_.collective_algorithm = forced;
  }
  std::vector<int> gpus(static_cast<size_t>(ranks));
  std::iota(gpus.begin(), gpus.end(), 0);
  model_ = std::make_unique<model::DecodeModel>(topology_, gpus);
}

model::DecodePlan PlanMaker::plan(model::DecodeAlgorithm algorithm, long long seq_len) const {
  return model_->plan(algorithm, planned_, seq_len, options_);
}

bool PlanMaker::latent() const { return model::has_latent_attention(workload_); }

}  // namespace treering::realrun::app
