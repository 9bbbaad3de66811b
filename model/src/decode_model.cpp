// DecodeModel: cached figures, point-to-point costs, generation estimates, the memory check.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "treering/model/decode.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {

DecodeModel::DecodeModel(const topologies::Topology& topology, std::vector<int> gpus) : topology_(&topology) {
  if (gpus.empty()) {
    for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) gpus.push_back(gpu);
  }
  group_ = describe_group(topology, gpus);  // checks the indices
  gpus_ = std::move(gpus);
  for (int gpu : gpus_) {
    domain_of_rank_.push_back(topology.domain_of_gpu(gpu));
    node_group_of_rank_.push_back(topology.node(topology.node_of_gpu(gpu)).group);
    rates_.push_back(compute_rates(topology, gpu));
  }
  slowest_ = rates_.front();
  for (const ComputeRates& rates : rates_) {
    slowest_.hbm_Bps = std::min(slowest_.hbm_Bps, rates.hbm_Bps);
    slowest_.peak_flops = std::min(slowest_.peak_flops, rates.peak_flops);
    slowest_.launch_s = std::max(slowest_.launch_s, rates.launch_s);
    slowest_.hbm_capacity_bytes = std::min(slowest_.hbm_capacity_bytes, rates.hbm_capacity_bytes);
  }
  add_pair_costs();
  add_ports();
}

// One route to a peer inside the domain and one outside, per rank: their first and last links are the rank's
// ports (the same for every peer of that kind, except inside a mesh). Example: an H100 of a DGX leaves by its
// NVSwitch uplink towards the GPUs of its node and by its NIC towards the others.
void DecodeModel::add_ports() {
  const int p = static_cast<int>(gpus_.size());
  ports_.assign(static_cast<size_t>(p), {});
  std::map<int, std::vector<int>> members;  // domain -> its first two ranks
  for (int rank = 0; rank < p; ++rank) {
    std::vector<int>& first = members[domain_of_rank_[static_cast<size_t>(rank)]];
    if (first.size() < 2) first.push_back(rank);
  }
  for (int rank = 0; rank < p; ++rank) {
    RankPorts& port = ports_[static_cast<size_t>(rank)];
    const topologies::NodeGroup& group =
        topology_->spec().groups[static_cast<size_t>(node_group_of_rank_[static_cast<size_t>(rank)])];
    port.mesh = group.fabric.type == topologies::FabricType::mesh;
    const int domain = domain_of_rank_[static_cast<size_t>(rank)];
    const std::vector<int>& own = members.at(domain);
    const auto other = members.begin()->first != domain ? members.begin() : std::next(members.begin());
    const int intra_peer = own.front() != rank ? own.front() : own.size() > 1 ? own[1] : -1;
    const int cross_peer = other != members.end() ? other->second.front() : -1;
    for (const int peer : {intra_peer, cross_peer}) {
      if (peer < 0) continue;
      const bool cross = peer == cross_peer;
      const topologies::Route there =
          topology_->route(gpus_[static_cast<size_t>(rank)], gpus_[static_cast<size_t>(peer)]);
      const topologies::Route back =
          topology_->route(gpus_[static_cast<size_t>(peer)], gpus_[static_cast<size_t>(rank)]);
      (cross ? port.out_cross : port.out_intra) = there.links.front();
      (cross ? port.in_cross : port.in_intra) = back.links.back();
      if (!cross) continue;
      for (topologies::LinkId id : there.links) {  // its NIC's link into the network, and back
        if (topology_->link(id).tier == topologies::Tier::scale_out) {
          port.nic_out = id;
          break;
        }
      }
      for (auto it = back.links.rbegin(); it != back.links.rend(); ++it) {
        if (topology_->link(*it).tier == topologies::Tier::scale_out) {
          port.nic_in = *it;
          break;
        }
      }
    }
  }
}

std::pair<long long, long long> DecodeModel::nic_ports(int from_rank, int to_rank) const {
  if (!crosses_domains(from_rank, to_rank)) return {-1, -1};
  return {ports_[static_cast<size_t>(from_rank)].nic_out, ports_[static_cast<size_t>(to_rank)].nic_in};
}

std::pair<long long, long long> DecodeModel::ports(int from_rank, int to_rank) const {
  const RankPorts& from = ports_[static_cast<size_t>(from_rank)];
  const RankPorts& to = ports_[static_cast<size_t>(to_rank)];
  if (!crosses_domains(from_rank, to_rank)) {
    if (from.mesh) {  // the pair's own link: a key no other pair has (links are numbered from 0)
      const long long own = -1 - (static_cast<long long>(from_rank) * static_cast<long long>(gpus_.size()) + to_rank);
      return {own, own};
    }
    return {from.out_intra, to.in_intra};
  }
  return {from.out_cross, to.in_cross};
}

DecodePlan DecodeModel::plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                             const PlanOptions& options) const {
  if (options.split == TokenSplit::by_speed && options.shard_tokens.empty()) {
    PlanOptions balanced = options;
    balanced.shard_tokens =
        split_by_speed(seq_len, rates_, workload, plan_sizes(workload, options.stats_bytes, options.partial_o_bytes));
    return make_plan(algorithm, workload, seq_len, gpus_, domain_of_rank_, balanced);
  }
  return make_plan(algorithm, workload, seq_len, gpus_, domain_of_rank_, options);
}

CollectiveEstimate DecodeModel::collective(const Phase& phase) const {
  CollectiveRequest request;
  request.op = phase.op;
  request.bytes = phase.bytes;
  request.algorithm = phase.algorithm;
  if (phase.algorithm) request.allowed = AlgorithmSet::all;
  return estimate_collective(group_, request);
}

CollectiveSchedule DecodeModel::collective_schedule(const Phase& phase) const {
  return model::collective_schedule(group_, domain_of_rank_, phase.op, phase.bytes, collective(phase).chosen);
}

bool DecodeModel::crosses_domains(int from_rank, int to_rank) const {
  return domain_of_rank_[static_cast<size_t>(from_rank)] != domain_of_rank_[static_cast<size_t>(to_rank)];
}

namespace {

DecodeModel::PairCost pair_cost(const topologies::Topology& topology, int from_gpu, int to_gpu) {
  const CommGroup pair = describe_group(topology, {from_gpu, to_gpu});
  CollectiveRequest request;
  request.op = CollectiveOp::sendrecv;
  request.bytes = 0;
  const CollectiveCandidate empty = estimate_collective(pair, request).chosen;
  request.bytes = 1e9;
  const CollectiveCandidate gigabyte = estimate_collective(pair, request).chosen;
  DecodeModel::PairCost cost{
      empty.latency_s, 1e9 / gigabyte.transfer_s, {}, {}};  // the send/recv model is affine in the size
  if (const auto& calibration = topology.spec().calibration) {
    const bool crosses = topology.domain_of_gpu(from_gpu) != topology.domain_of_gpu(to_gpu);
    cost.bands = crosses ? calibration->p2p_scale_out : calibration->p2p_scale_up;
  }
  return cost;
}

}  // namespace

// One representative pair per (node group, node group, across domains) class: for each group the first two
// ranks sharing a domain, and the first rank of each of its first two domains.
void DecodeModel::add_pair_costs() {
  std::map<int, std::vector<int>> same_domain;  // node group -> two ranks in one domain
  std::map<int, std::vector<int>> leaders;      // node group -> first ranks of two domains
  std::map<int, int> seen_domain_first;         // domain -> its first rank
  for (int rank = 0; rank < static_cast<int>(gpus_.size()); ++rank) {
    const int group = node_group_of_rank_[static_cast<size_t>(rank)];
    auto [it, first] = seen_domain_first.emplace(domain_of_rank_[static_cast<size_t>(rank)], rank);
    if (first) {
      if (leaders[group].size() < 2) leaders[group].push_back(rank);
    } else if (same_domain[group].empty()) {
      same_domain[group] = {it->second, rank};
    }
  }
  // Sends inside a domain run on the channels NCCL gives them in this communicator (all the plan's GPUs).
  const P2pCommunicator communicator = p2p_communicator(*topology_, gpus_);
  for (const auto& [group, pair] : same_domain) {
    PairCost cost = pair_cost(*topology_, gpus_[pair[0]], gpus_[pair[1]]);
    cost.communicator = communicator;
    pair_costs_[{group, group, false}] = cost;
  }
  for (const auto& [from_group, from_leaders] : leaders) {
    for (const auto& [to_group, to_leaders] : leaders) {
      for (int from : from_leaders) {
        for (int to : to_leaders) {
          if (domain_of_rank_[from] != domain_of_rank_[to] && !pair_costs_.count({from_group, to_group, true})) {
            pair_costs_[{from_group, to_group, true}] = pair_cost(*topology_, gpus_[from], gpus_[to]);
          }
        }
      }
    }
  }
  node_groups_ = static_cast<int>(topology_->spec().groups.size());
  pair_cost_of_.assign(static_cast<size_t>(node_groups_) * static_cast<size_t>(node_groups_) * 2, nullptr);
  for (const auto& [key, cost] : pair_costs_) {
    const auto [from_group, to_group, across] = key;
    pair_cost_of_[(static_cast<size_t>(from_group) * static_cast<size_t>(node_groups_) +
                   static_cast<size_t>(to_group)) *
                      2 +
                  (across ? 1 : 0)] = &cost;
  }
}

std::vector<double> DecodeModel::group_send_latencies_s(int from_rank, const std::vector<int>& peers,
                                                        const std::vector<double>& bytes) const {
  std::vector<double> latencies;
  int network_posted = 0;
  for (size_t i = 0; i < peers.size(); ++i)
    latencies.push_back(group_send_latency_s(from_rank, peers[i], bytes[i], network_posted));
  return latencies;
}

double DecodeModel::group_send_latency_s(int from_rank, int to_rank, double bytes, int& network_posted) const {
  const double latency_s = p2p(from_rank, to_rank).at(bytes).latency_s;
  return crosses_domains(from_rank, to_rank) ? latency_s + kNetworkPostOverheadSimple_s * network_posted++ : latency_s;
}

const DecodeModel::PairCost& DecodeModel::p2p(int from_rank, int to_rank) const {
  const size_t index =
      (static_cast<size_t>(node_group_of_rank_[static_cast<size_t>(from_rank)]) * static_cast<size_t>(node_groups_) +
       static_cast<size_t>(node_group_of_rank_[static_cast<size_t>(to_rank)])) *
          2 +
      (crosses_domains(from_rank, to_rank) ? 1 : 0);
  const PairCost* cost = pair_cost_of_[index];
  if (!cost) throw std::out_of_range("no pair cost for these ranks");
  return *cost;
}

double DecodeModel::generation_s(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len,
                                 long long tokens, const PlanOptions& options) const {
  if (tokens < 1) throw topologies::InputError("--tokens must be at least 1");
  if (tokens > 1'000'000'000'000LL - seq_len)
    throw topologies::InputError("--tokens is too large (context over 1e12 tokens)");
  const DecodeResult first = predict(algorithm, workload, seq_len, options);
  if (tokens == 1) return first.token_s;
  const double last = predict(algorithm, workload, seq_len + tokens - 1, options).token_s;
  return generation_from_ends_s(tokens, first.token_s, last, first.first_call_s);
}

double generation_from_ends_s(long long tokens, double first_token_s, double last_token_s, double first_call_s) {
  return static_cast<double>(tokens) * (first_token_s + last_token_s) / 2.0 -
         static_cast<double>(tokens - 1) * first_call_s;
}

std::string memory_shortfall(const DecodeResult& result, const DecodeModel& model) {
  const double smallest = model.slowest_rates().hbm_capacity_bytes;
  if (result.memory.total <= smallest) return "";
  return "needs " + topologies::format_bytes(result.memory.total) + " per GPU (KV cache " +
         topologies::format_bytes(result.memory.kv_cache) + ", weights " +
         topologies::format_bytes(result.memory.weights) + "), a GPU has " + topologies::format_bytes(smallest);
}

void check_fits(const DecodeResult& result, const DecodeModel& model) {
  const std::string shortfall = memory_shortfall(result, model);
  if (shortfall.empty()) return;
  throw topologies::InputError(std::string(to_string(result.algorithm)) + " at " + std::to_string(result.seq_len) +
                               " tokens on " + std::to_string(result.gpus) + " GPUs does not fit: it " + shortfall);
}

}  // namespace treering::model
