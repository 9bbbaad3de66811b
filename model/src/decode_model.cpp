// DecodeModel: cached figures, point-to-point costs, generation estimates, the memory check.
#include <cmath>
#include <stdexcept>

#include "treering/model/decode.hpp"
#include "treering/topologies/units.hpp"

namespace treering::model {

DecodeModel::DecodeModel(const topologies::Topology& topology, std::vector<int> gpus) : topology_(&topology) {
  if (gpus.empty()) {
    for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) gpus.push_back(gpu);
  }
  group_ = describe_group(topology, gpus);  // checks the indices
  gpus_ = std::move(gpus);
  for (int gpu : gpus_) {
    domain_of_rank_.push_back(topology.domain_of_gpu(gpu));
    rates_.push_back(compute_rates(topology, gpu));
  }
}

DecodePlan DecodeModel::plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                             const PlanOptions& options) const {
  return make_plan(algorithm, workload, seq_len, gpus_, domain_of_rank_, options);
}

bool DecodeModel::crosses_domains(int from_rank, int to_rank) const {
  return domain_of_rank_[static_cast<size_t>(from_rank)] != domain_of_rank_[static_cast<size_t>(to_rank)];
}

// Pairs of GPUs cost the same when their node groups and their sharing a domain are the same, so one
// CommGroup per such class serves every pair.
CollectiveCandidate DecodeModel::p2p(int from_rank, int to_rank, double bytes) const {
  const int from_gpu = gpus_[static_cast<size_t>(from_rank)];
  const int to_gpu = gpus_[static_cast<size_t>(to_rank)];
  const auto key = std::make_tuple(topology_->node(topology_->node_of_gpu(from_gpu)).group,
                                   topology_->node(topology_->node_of_gpu(to_gpu)).group,
                                   crosses_domains(from_rank, to_rank));
  std::shared_ptr<const CommGroup> pair;
  {
    std::lock_guard<std::mutex> lock(pair_mutex_);
    auto found = pair_groups_.find(key);
    if (found == pair_groups_.end()) {
      found = pair_groups_.emplace(key, std::make_shared<CommGroup>(describe_group(*topology_, {from_gpu, to_gpu}))).first;
    }
    pair = found->second;
  }
  CollectiveRequest request;
  request.op = CollectiveOp::sendrecv;
  request.bytes = bytes;
  return estimate_collective(*pair, request).chosen;
}

double DecodeModel::generation_s(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                                 long long tokens) const {
  if (tokens < 1) throw std::invalid_argument("--tokens must be at least 1");
  const double first = predict(algorithm, workload, seq_len).token_s;
  if (tokens == 1) return first;
  const double last = predict(algorithm, workload, seq_len + tokens - 1).token_s;
  return static_cast<double>(tokens) * (first + last) / 2.0;
}

void check_fits(const DecodeResult& result, const DecodeModel& model) {
  double smallest = 0;
  for (int rank = 0; rank < result.gpus; ++rank) {
    const double capacity = model.rates(rank).hbm_capacity_bytes;
    smallest = rank == 0 ? capacity : std::min(smallest, capacity);
  }
  if (result.memory.total > smallest) {
    throw std::invalid_argument(
        std::string(to_string(result.algorithm)) + " at " + std::to_string(result.seq_len) + " tokens on " +
        std::to_string(result.gpus) + " GPUs does not fit: it needs " + topologies::format_bytes(result.memory.total) +
        " per GPU (KV cache " + topologies::format_bytes(result.memory.kv_cache) + ", weights " +
        topologies::format_bytes(result.memory.weights) + "), a GPU has " + topologies::format_bytes(smallest));
  }
}

}  // namespace treering::model
