// Building decode plans (plan.hpp).
#include "treering/model/plan.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <optional>
#include <array>
#include <map>
#include <stdexcept>

namespace treering::model {
namespace {

constexpr std::array<const char*, 8> kNames{"ring", "tree", "tree-fused", "tree-lse", "allgather-merge", "pass-q", "a2a", "ag-rs"};

Phase attend() { return {PhaseKind::attend, "flash-decoding over the local shard", {}, 0, {}, 0, {}, 0}; }

Phase collective(const std::string& label, CollectiveOp op, double bytes, int element_bytes) {
  return {PhaseKind::collective, label, op, bytes, {}, 0, {}, element_bytes};
}

Phase elementwise(const std::string& label, double bytes) {
  return {PhaseKind::elementwise, label, CollectiveOp::allreduce, bytes, {}, 0, {}, 0};
}

// One k-ary reduction tree over `members` (ranks, in order): level by level, the member at each multiple of
// stride * fan_in receives from the next fan_in - 1 strides. fan_in 0 means all at once (a flat tree).
std::vector<std::vector<Transfer>> tree_levels(const std::vector<int>& members, int fan_in, double bytes) {
  const size_t count = members.size();
  const size_t fan = fan_in <= 1 ? std::max<size_t>(count, 2) : static_cast<size_t>(fan_in);
  std::vector<std::vector<Transfer>> levels;
  for (size_t stride = 1; stride < count; stride *= fan) {
    std::vector<Transfer> level;
    for (size_t root = 0; root < count; root += stride * fan) {
      for (size_t j = 1; j < fan && root + j * stride < count; ++j) {
        level.push_back({members[root + j * stride], members[root], bytes});
      }
    }
    levels.push_back(std::move(level));
  }
  return levels;
}

int most_incoming(const std::vector<Transfer>& sends) {
  std::map<int, int> incoming;
  int most = 0;
  for (const Transfer& send : sends) most = std::max(most, ++incoming[send.to]);
  return most;
}

// tree-lse: reduce (o, lse) inside each domain, then across the domains' first ranks; broadcast o back down
// the same edges reversed.
std::vector<Phase> tree_lse_phases(const std::vector<int>& domain_of_rank, const PlanSizes& sizes,
                                   const PlanOptions& options) {
  std::map<int, std::vector<int>> by_domain;
  for (int rank = 0; rank < static_cast<int>(domain_of_rank.size()); ++rank) by_domain[domain_of_rank[rank]].push_back(rank);
  std::vector<std::vector<Transfer>> reduce_levels;
  for (const auto& [domain, members] : by_domain) {
    auto levels = tree_levels(members, options.tree_fan_in_domain, sizes.state_bytes);
    if (reduce_levels.size() < levels.size()) reduce_levels.resize(levels.size());
    for (size_t l = 0; l < levels.size(); ++l) {
      reduce_levels[l].insert(reduce_levels[l].end(), levels[l].begin(), levels[l].end());
    }
  }
  const size_t domain_levels = reduce_levels.size();
  std::vector<int> leaders;
  for (const auto& [domain, members] : by_domain) leaders.push_back(members.front());
  for (auto& level : tree_levels(leaders, options.tree_fan_in_network, sizes.state_bytes)) reduce_levels.push_back(level);
  std::vector<Phase> phases;
  for (size_t l = 0; l < reduce_levels.size(); ++l) {
    const char* tier = l < domain_levels ? "inside domains" : "across domains";
    phases.push_back({PhaseKind::transfers, std::string("reduce (o, lse) ") + tier, CollectiveOp::allreduce, 0,
                      reduce_levels[l], most_incoming(reduce_levels[l]) + 1, {}, 0});
  }
  for (size_t l = reduce_levels.size(); l-- > 0;) {
    std::vector<Transfer> down;
    for (const Transfer& up : reduce_levels[l]) down.push_back({up.to, up.from, sizes.o_bytes});
    const char* tier = l < domain_levels ? "inside domains" : "across domains";
    phases.push_back({PhaseKind::transfers, std::string("broadcast o ") + tier, CollectiveOp::allreduce, 0, down, 0, {}, 0});
  }
  return phases;
}

// One all-to-all that sends each owner, from every other rank, `bytes_per_unit` for each of the units
// (sequences or heads) `owned(owner)` gives it; merge_fraction: the most units a rank merges, of `units`.
// Example: pass-q with 4 sequences on 2 ranks: each rank sends the other 2 sequences' partial states.
template <typename Owned>
std::optional<Phase> all_to_all_home(int ranks, long long units, double bytes_per_unit, const char* label, Owned owned) {
  std::vector<Transfer> sends;
  long long most = 0;
  for (int owner = 0; owner < ranks; ++owner) {
    const long long count = owned(owner);
    most = std::max(most, count);
    for (int from = 0; from < ranks && count > 0; ++from) {
      if (from != owner) sends.push_back({from, owner, static_cast<double>(count) * bytes_per_unit});
    }
  }
  if (sends.empty()) return std::nullopt;
  Phase phase{PhaseKind::transfers, label, CollectiveOp::allreduce, 0, sends, ranks, {}, 0};
  phase.merge_fraction = static_cast<double>(most) / static_cast<double>(units);
  return phase;
}

// pass-q: the query blocks travel the ring; then every rank sends each owner the partial states of the owner's
// sequences (one all-to-all) and the owner merges the p states of each.
std::vector<Phase> pass_q_phases(int ranks, int batch, const PlanSizes& s) {
  std::vector<Phase> phases{{PhaseKind::q_ring, "pass query blocks around the ring, attending each to the local shard",
                             {}, 0, {}, 0, {}, 0}};
  const auto back = all_to_all_home(ranks, batch, s.state_bytes / batch, "all-to-all: partial (o, lse) to each sequence's owner",
                                    [&](int owner) { return owned_sequences(batch, ranks, owner).count; });
  if (back) phases.push_back(*back);
  return phases;
}

// a2a: after the attention, every rank sends each other rank the partial states of that rank's head slice; each
// merges the p states of its slice.
std::vector<Phase> a2a_phases(int ranks, const Workload& w, const PlanSizes& s) {
  std::vector<Phase> phases{attend()};
  const auto exchange = all_to_all_home(ranks, w.query_heads, s.state_bytes / w.query_heads,
                                        "all-to-all: (o, lse) of each head slice to its owner",
                                        [&](int owner) { return owned_heads(w.query_heads, ranks, owner).count; });
  if (exchange) phases.push_back(*exchange);
  return phases;
}

}  // namespace

const char* to_string(DecodeAlgorithm algorithm) { return kNames[static_cast<size_t>(algorithm)]; }

DecodeAlgorithm parse_decode_algorithm(const std::string& text) {
  std::string known;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (text == kNames[i]) return static_cast<DecodeAlgorithm>(i);
    known += (i ? ", " : "") + std::string(kNames[i]);
  }
  throw topologies::InputError("unknown algorithm '" + text + "' (expected one of: " + known + ")");
}

const std::vector<DecodeAlgorithm>& all_decode_algorithms() {
  static const std::vector<DecodeAlgorithm> all{DecodeAlgorithm::ring,     DecodeAlgorithm::tree,
                                                DecodeAlgorithm::tree_fused, DecodeAlgorithm::tree_lse,
                                                DecodeAlgorithm::allgather_merge, DecodeAlgorithm::pass_q,
                                                DecodeAlgorithm::a2a,      DecodeAlgorithm::ag_rs};
  return all;
}

const std::vector<DecodeAlgorithm>& paper_decode_algorithms() {
  static const std::vector<DecodeAlgorithm> paper(all_decode_algorithms().begin(), all_decode_algorithms().begin() + 5);
  return paper;
}

OutputSplit output_split(DecodeAlgorithm algorithm) {
  switch (algorithm) {
    case DecodeAlgorithm::pass_q: return OutputSplit::by_sequence;
    case DecodeAlgorithm::a2a:
    case DecodeAlgorithm::ag_rs: return OutputSplit::by_head;
    default: return OutputSplit::replicated;
  }
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
  sizes.q_bytes = b * workload.query_heads * workload.head_dim * e;
  sizes.o_bytes = b * workload.query_heads * workload.head_dim * (partial_o_bytes > 0 ? partial_o_bytes : e);
  sizes.kv_bytes_per_token = 2.0 * workload.kv_heads * workload.head_dim * b * e;
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
  if (!impl.collective_algorithm.empty()) options.collective_algorithm = parse_collective_algorithm(impl.collective_algorithm);
  if (impl.partial_o_bytes > 0) options.partial_o_bytes = impl.partial_o_bytes;
  options.ring_overlap = options.ring_overlap && impl.ring_overlap;
  return options;
}

}  // namespace

DecodePlan make_plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len, std::vector<int> gpus,
                     const std::vector<int>& domain_of_rank, const PlanOptions& given) {
  const PlanOptions options = with_impl(given);
  validate(workload);
  if (gpus.empty()) throw topologies::InputError("a plan needs at least one GPU");
  if (seq_len < 1) throw topologies::InputError("the sequence must hold at least one token");
  if (domain_of_rank.size() != gpus.size()) throw std::logic_error("one domain per rank is needed");
  DecodePlan plan;
  plan.algorithm = algorithm;
  plan.workload = workload;
  plan.seq_len = seq_len;
  plan.shards = options.shard_tokens.empty() ? split_tokens(seq_len, static_cast<int>(gpus.size()))
                                             : shards_of(options.shard_tokens, seq_len, gpus.size());
  plan.gpus = std::move(gpus);
  plan.ring_overlap = options.ring_overlap;
  if (options.stats_bytes < 1 || options.partial_o_bytes < 0) throw topologies::InputError("element sizes must be positive");
  plan.sizes = plan_sizes(workload, options.stats_bytes, options.partial_o_bytes);
  const PlanSizes& s = plan.sizes;
  const double p = static_cast<double>(plan.gpus.size());
  const int stats = options.stats_bytes;
  const int o_element = options.partial_o_bytes > 0 ? options.partial_o_bytes : workload.dtype_bytes;
  switch (algorithm) {
    case DecodeAlgorithm::ring:
      plan.phases = {{PhaseKind::ring_pass, "pass K/V blocks around the ring, attending to each", {}, 0, {}, 0, {}, 0},
                     elementwise("normalise o", s.o_bytes)};
      break;
    case DecodeAlgorithm::tree:
      plan.phases = {attend(),
                     collective("all-reduce max of lse", CollectiveOp::allreduce, s.stats_bytes, stats),
                     elementwise("numerator o*exp(lse-m), denominator exp(lse-m)", s.state_bytes),
                     collective("all-reduce sum of numerators", CollectiveOp::allreduce, s.o_bytes, o_element),
                     collective("all-reduce sum of denominators", CollectiveOp::allreduce, s.stats_bytes, stats),
                     elementwise("divide", s.o_bytes)};
      break;
    case DecodeAlgorithm::tree_fused:
      plan.phases = {attend(),
                     collective("all-reduce max of lse", CollectiveOp::allreduce, s.stats_bytes, stats),
                     elementwise("pack [numerator | denominator]", s.state_bytes),
                     collective("all-reduce sum of [numerator | denominator]", CollectiveOp::allreduce,
                                s.o_bytes + s.stats_bytes, o_element == stats ? stats : 0),
                     elementwise("divide", s.o_bytes)};
      break;
    case DecodeAlgorithm::tree_lse: {
      plan.phases = {attend()};
      auto reduce = tree_lse_phases(domain_of_rank, s, options);
      plan.phases.insert(plan.phases.end(), reduce.begin(), reduce.end());
      break;
    }
    case DecodeAlgorithm::allgather_merge:
      plan.phases = {attend(), collective("all-gather (o, lse)", CollectiveOp::allgather, p * s.state_bytes, 0),
                     {PhaseKind::merge, "merge p states", {}, 0, {}, static_cast<int>(plan.gpus.size()), {}, 0}};
      break;
    case DecodeAlgorithm::pass_q: plan.phases = pass_q_phases(static_cast<int>(p), workload.batch, s); break;
    case DecodeAlgorithm::a2a: plan.phases = a2a_phases(static_cast<int>(p), workload, s); break;
    case DecodeAlgorithm::ag_rs:  // the global lse from all p, each o rescaled by exp(lse - global), summed and scattered
      plan.phases = {attend(), collective("all-gather lse", CollectiveOp::allgather, p * s.stats_bytes, stats),
                     elementwise("rescale o by exp(lse - global lse)", s.state_bytes + p * s.stats_bytes),
                     collective("reduce-scatter of rescaled o", CollectiveOp::reduce_scatter, s.o_bytes, o_element)};
      break;
  }
  // One GPU holds the whole context: there is nothing to combine, and no algorithm runs its combine's kernels or
  // collectives (with cp 1 every combine is the attention alone).
  if (plan.gpus.size() == 1) plan.phases = {attend()};
  if (options.impl) apply_impl(plan, *options.impl);
  plan.impl_profile = options.impl;
  for (Phase& phase : plan.phases) {
    if (phase.kind == PhaseKind::collective) phase.algorithm = options.collective_algorithm;
  }
  return plan;
}

}  // namespace treering::model
