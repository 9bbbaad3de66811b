// expert_routing (expert_routing.hpp): destinations per token and the most-loaded GPU of a batch.
#include "treering/model/expert_routing.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "treering/model/weights.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
namespace {

using topologies::InputError;

// C(pool - held, picks) / C(pool, picks) = prod_{i < picks} (pool - held - i) / (pool - i): the chance that
// `picks` distinct draws from `pool` miss `held` of them (held may be fractional: an average holding).
double all_miss(double pool, double held, int picks) {
  double miss = 1;
  for (int i = 0; i < picks; ++i) {
    if (pool - i <= 0) return 0;
    miss *= std::max(0.0, (pool - held - i) / (pool - i));
  }
  return miss;
}

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0));
}

void check_placement(const Workload& w, const ExpertPlacement& placement, int tokens_per_gpu) {
  if (w.experts <= 0 || w.experts_per_token <= 0)
    throw InputError("expert parallelism needs an MoE workload: " + w.name + " has no routed experts");
  if (placement.ep < 1) throw InputError("--ep must be at least 1, got " + std::to_string(placement.ep));
  if (placement.gpus_per_node < 1 || placement.ep % placement.gpus_per_node != 0)
    throw InputError("EP " + std::to_string(placement.ep) + " does not fill whole nodes of " +
                     std::to_string(placement.gpus_per_node) + " GPUs");
  if (placement.redundant_experts < 0)
    throw InputError("--redundant-experts must be at least 0, got " + std::to_string(placement.redundant_experts));
  const int slots = w.experts + placement.redundant_experts;
  if (slots % placement.ep != 0)
    throw InputError(w.name + "'s " + std::to_string(w.experts) + " routed experts" +
                     (placement.redundant_experts > 0
                          ? " and " + std::to_string(placement.redundant_experts) + " redundant ones"
                          : std::string()) +
                     " do not split evenly over EP " + std::to_string(placement.ep));
  if (!(placement.skew >= 1)) throw InputError("--expert-skew must be at least 1 (1: uniform routing)");
  if (tokens_per_gpu < 0) throw InputError("tokens per GPU must be at least 0");
}

}  // namespace

double routing_miss_probability(const Workload& w, double unit_experts) {
  const int k = w.experts_per_token;
  const int groups = w.expert_groups;
  if (groups <= 1 || w.expert_groups_per_token >= groups) return all_miss(w.experts, unit_experts, k);
  const int picked = w.expert_groups_per_token;
  const double group_experts = static_cast<double>(w.experts) / groups;
  const double pool = picked * group_experts;  // the experts of the groups a token picked
  if (unit_experts <= group_experts + 1e-9) {  // inside one group
    const double chosen = static_cast<double>(picked) / groups;
    return (1 - chosen) + chosen * all_miss(pool, unit_experts, k);
  }
  const double whole = unit_experts / group_experts;
  const int held = static_cast<int>(std::lround(whole));
  if (std::abs(whole - held) > 1e-9)
    throw InputError(w.name + ": a GPU or node holding " + std::to_string(unit_experts) +
                     " experts splits its expert groups of " + std::to_string(group_experts) + " unevenly");
  double miss = 0;
  for (int j = 0; j <= std::min(held, picked); ++j) {
    const double chance = binomial(held, j) * binomial(groups - held, picked - j) / binomial(groups, picked);
    miss += chance * all_miss(pool, j * group_experts, k);
  }
  return miss;
}

double expected_binomial_maximum(long long trials, double probability, int units) {
  if (trials <= 0 || probability <= 0 || units < 1) return 0;
  if (probability >= 1) return static_cast<double>(trials);
  const double log_p = std::log(probability), log_q = std::log1p(-probability);
  const double log_n = std::lgamma(trials + 1.0);
  const double mean = trials * probability;
  double cdf = 0, expected = 0;
  for (long long x = 0; x < trials; ++x) {
    cdf += std::exp(log_n - std::lgamma(x + 1.0) - std::lgamma(trials - x + 1.0) + x * log_p + (trials - x) * log_q);
    const double above = 1 - std::pow(std::min(1.0, cdf), units);  // P(max > x)
    expected += above;
    if (x > mean && above < 1e-15) break;
  }
  return expected;
}

ExpertRouting expert_routing(const Workload& w, const ExpertPlacement& placement, int tokens_per_gpu) {
  check_placement(w, placement, tokens_per_gpu);
  ExpertRouting r;
  r.ep = placement.ep;
  r.nodes = placement.ep / placement.gpus_per_node;
  r.group_limited = w.expert_groups > 1 && w.expert_groups_per_token < w.expert_groups;
  r.experts_per_gpu = static_cast<double>(w.experts + placement.redundant_experts) / placement.ep;
  r.copies_per_token = w.experts_per_token;
  const double gpu_experts = static_cast<double>(w.experts) / placement.ep;  // routed experts, replicas aside
  r.gpu_probability = 1 - routing_miss_probability(w, gpu_experts);
  r.node_probability = 1 - routing_miss_probability(w, gpu_experts * placement.gpus_per_node);
  r.gpus_per_token = r.ep * r.gpu_probability;
  r.nodes_per_token = r.nodes * r.node_probability;
  r.tokens_per_gpu = tokens_per_gpu;
  r.mean_copies_received = static_cast<double>(tokens_per_gpu) * w.experts_per_token;
  const long long tokens = static_cast<long long>(tokens_per_gpu) * placement.ep;
  // the hottest expert's excess over the mean, halved by a replica of it, spread over its GPU's experts
  const double hottest = placement.redundant_experts > 0 ? placement.skew / 2 : placement.skew;
  const double skew_factor = 1 + std::max(0.0, hottest - 1) / gpu_experts;
  r.busiest_tokens_received = expected_binomial_maximum(tokens, r.gpu_probability, placement.ep) * skew_factor;
  const double copies_per_arrival = r.gpu_probability > 0 ? w.experts_per_token / (r.ep * r.gpu_probability) : 0;
  r.busiest_copies_received = r.busiest_tokens_received * copies_per_arrival;
  r.busiest_factor = r.mean_copies_received > 0 ? r.busiest_copies_received / r.mean_copies_received : 1;
  const int held = static_cast<int>(std::lround(r.experts_per_gpu));
  r.busiest_experts_touched =
      expected_experts_touched(held, 1, static_cast<int>(std::lround(r.busiest_copies_received)));
  return r;
}

}  // namespace treering::model
