// Building decode plans (plan.hpp).
#include "treering/model/plan.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "decode_algorithm_phases.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace treering::model {

const char* to_string(DecodeAlgorithm algorithm) { return algorithm_info(algorithm).name; }

DecodeAlgorithm parse_decode_algorithm(const std::string& text) {
  for (const DecodeAlgorithmInfo& info : decode_algorithm_table()) {
    if (text == info.name) return info.id;
  }
  throw topologies::InputError("unknown algorithm '" + text + "' (expected one of: " + decode_algorithm_names() + ")");
}

const std::vector<DecodeAlgorithm>& all_decode_algorithms() {
  static const std::vector<DecodeAlgorithm> all = [] {
    std::vector<DecodeAlgorithm> ids;
    for (const DecodeAlgorithmInfo& info : decode_algorithm_table()) ids.push_back(info.id);
    return ids;
  }();
  return all;
}

const std::vector<DecodeAlgorithm>& paper_decode_algorithms() {
  static const std::vector<DecodeAlgorithm> paper = [] {
    std::vector<DecodeAlgorithm> ids;
    for (const DecodeAlgorithmInfo& info : decode_algorithm_table()) {
      if (info.in_paper) ids.push_back(info.id);
    }
    return ids;
  }();
  return paper;
}

OutputSplit output_split(DecodeAlgorithm algorithm) { return algorithm_info(algorithm).output_split; }

const char* to_string(PhaseRole role) {
  static constexpr const char* kRoles[] = {"attention",
                                           "kv-ring",
                                           "q-ring",
                                           "normalise",
                                           "lse-max",
                                           "rescale",
                                           "numerator-sum",
                                           "denominator-sum",
                                           "rescaled-sum",
                                           "divide",
                                           "state-reduce",
                                           "output-broadcast",
                                           "state-gather",
                                           "merge-gathered",
                                           "states-to-sequence-owners",
                                           "states-to-head-owners",
                                           "lse-gather",
                                           "rescale-to-global",
                                           "rescaled-reduce-scatter",
                                           "query-gather",
                                           "implementation"};
  static_assert(std::size(kRoles) == static_cast<size_t>(PhaseRole::implementation) + 1, "one name per role");
  return kRoles[static_cast<size_t>(role)];
}

namespace {

// Item `index` of split_tokens(items, ranks), in O(1): the first items mod ranks hold one more.
// Example: 5 over 2: index 0 holds [0, 3), index 1 [3, 5).
Shard share_of(long long items, int ranks, int index) {
  if (ranks < 1 || index < 0 || index >= ranks) throw std::out_of_range("no such rank");
  const long long base = items / ranks, extra = items % ranks;
  return {index * base + std::min<long long>(index, extra), base + (index < extra ? 1 : 0)};
}

}  // namespace

Shard owned_sequences(int batch, int ranks, int owner) { return share_of(batch, ranks, owner); }

Shard owned_heads(int heads, int ranks, int owner) { return share_of(heads, ranks, owner); }

const char* to_string(TokenSplit split) { return split == TokenSplit::equal ? "equal" : "by-speed"; }

TokenSplit parse_token_split(const std::string& text) {
  if (text == "equal") return TokenSplit::equal;
  if (text == "by-speed") return TokenSplit::by_speed;
  throw topologies::InputError("unknown split '" + text + "' (equal or by-speed)");
}

namespace {

// Given counts per rank, checked: one per rank, none negative, summing to the length.
std::vector<Shard> shards_of(const std::vector<long long>& counts, long long seq_len, size_t ranks) {
  if (counts.size() != ranks) throw topologies::InputError("shard_tokens needs one count per GPU");
  std::vector<Shard> shards;
  long long first = 0;
  for (long long count : counts) {
    if (count < 0) throw topologies::InputError("a shard cannot hold a negative number of tokens");
    shards.push_back({first, count});
    first += count;
  }
  if (first != seq_len) throw topologies::InputError("shard_tokens must add up to the sequence length");
  return shards;
}

}  // namespace

std::vector<Shard> split_tokens(long long tokens, int ranks) {
  if (ranks < 1) throw topologies::InputError("at least one GPU is needed");
  if (tokens < 0) throw topologies::InputError("the number of tokens must not be negative");
  std::vector<Shard> shards(static_cast<size_t>(ranks));
  const long long base = tokens / ranks;
  const long long extra = tokens % ranks;
  long long first = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    shards[static_cast<size_t>(rank)] = {first, base + (rank < extra ? 1 : 0)};
    first += shards[static_cast<size_t>(rank)].count;
  }
  return shards;
}

PlanSizes plan_sizes(const Workload& workload, int stats_bytes, int partial_o_bytes) {
  const double b = workload.batch;
  const double e = workload.dtype_bytes;
  PlanSizes sizes;
  const double values = attention_value_dim(workload);
  sizes.q_bytes = b * workload.query_heads * workload.head_dim * e;
  sizes.o_bytes = b * workload.query_heads * values * (partial_o_bytes > 0 ? partial_o_bytes : e);
  // Latent attention caches one latent (keys and, in its first kv_lora_rank values, the values): head_dim per token.
  sizes.kv_bytes_per_token = cached_values_per_token(workload) * b * workload.kv_cache_bytes;
  sizes.stats_bytes = b * workload.query_heads * stats_bytes;
  sizes.state_bytes = sizes.o_bytes + sizes.stats_bytes;
  return sizes;
}

namespace {

// The options as the implementation sets them: its collective algorithm, partial output size and ring overlap.
PlanOptions with_impl(const PlanOptions& given) {
  if (!given.impl) return given;
  PlanOptions options = given;
  const topologies::ImplProfile& impl = *given.impl;
  if (!impl.collective_algorithm.empty())
    options.collective_algorithm = parse_collective_algorithm(impl.collective_algorithm);
  if (impl.partial_o_bytes > 0) options.partial_o_bytes = impl.partial_o_bytes;
  options.ring_overlap = options.ring_overlap && impl.ring_overlap;
  return options;
}

}  // namespace

DecodePlan make_plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len, std::vector<int> gpus,
                     const std::vector<int>& domain_of_rank, const PlanOptions& options) {
  return make_plan(algorithm_info(algorithm), workload, seq_len, std::move(gpus), domain_of_rank, options);
}

DecodePlan make_plan(const DecodeAlgorithmInfo& algorithm, const Workload& workload, long long seq_len,
                     std::vector<int> gpus, const std::vector<int>& domain_of_rank, const PlanOptions& given) {
  const PlanOptions options = with_impl(given);
  validate(workload);
  if (gpus.empty()) throw topologies::InputError("a plan needs at least one GPU");
  if (seq_len < 1) throw topologies::InputError("the sequence must hold at least one token");
  if (domain_of_rank.size() != gpus.size()) throw std::logic_error("one domain per rank is needed");
  DecodePlan plan;
  plan.algorithm = algorithm.id;
  plan.info = &algorithm;
  plan.workload = workload;
  plan.seq_len = seq_len;
  plan.shards = options.shard_tokens.empty() ? split_tokens(seq_len, static_cast<int>(gpus.size()))
                                             : shards_of(options.shard_tokens, seq_len, gpus.size());
  plan.gpus = std::move(gpus);
  plan.ring_overlap = options.ring_overlap;
  if (options.stats_bytes < 1 || options.partial_o_bytes < 0)
    throw topologies::InputError("element sizes must be positive");
  plan.sizes = plan_sizes(workload, options.stats_bytes, options.partial_o_bytes);
  const int o_element = options.partial_o_bytes > 0 ? options.partial_o_bytes : workload.dtype_bytes;
  // One GPU holds the whole context: there is nothing to combine, and no algorithm runs its combine's kernels or
  // collectives (with cp 1 every combine is the attention alone).
  if (plan.gpus.size() == 1) {
    plan.phases = {detail::attention_phase()};
  } else {
    plan.phases = algorithm.phases({workload, plan.sizes, static_cast<int>(plan.gpus.size()), options.stats_bytes,
                                    o_element, domain_of_rank, options});
  }
  if (options.gather_queries && plan.gpus.size() > 1) {
    plan.phases.insert(plan.phases.begin(), Phase{.kind = PhaseKind::collective,
                                                  .role = PhaseRole::query_gather,
                                                  .label = "all-gather q",
                                                  .op = CollectiveOp::allgather,
                                                  .bytes = plan.sizes.q_bytes,
                                                  .element_bytes = workload.dtype_bytes});
  }
  if (options.impl) apply_impl(plan, options.impl);
  for (Phase& phase : plan.phases) {
    if (phase.kind == PhaseKind::collective) phase.algorithm = options.collective_algorithm;
  }
  return plan;
}

}  // namespace treering::model
