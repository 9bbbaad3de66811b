// tree-lse's, pass-q's and a2a's phases (decode_algorithm_phases.hpp): transfers built rank by rank.
#include "decode_algorithm_phases.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace treering::model::detail {
namespace {

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

// Each domain's reduction levels side by side, then the levels across the domains' first ranks; the number of
// levels inside domains second.
std::pair<std::vector<std::vector<Transfer>>, size_t> reduce_levels_of(const PhaseInputs& in) {
  std::map<int, std::vector<int>> by_domain;
  for (int rank = 0; rank < static_cast<int>(in.domain_of_rank.size()); ++rank) {
    by_domain[in.domain_of_rank[static_cast<size_t>(rank)]].push_back(rank);
  }
  std::vector<std::vector<Transfer>> reduce_levels;
  for (const auto& [domain, members] : by_domain) {
    auto levels = tree_levels(members, in.options.tree_fan_in_domain, in.sizes.state_bytes);
    if (reduce_levels.size() < levels.size()) reduce_levels.resize(levels.size());
    for (size_t l = 0; l < levels.size(); ++l) {
      reduce_levels[l].insert(reduce_levels[l].end(), levels[l].begin(), levels[l].end());
    }
  }
  const size_t domain_levels = reduce_levels.size();
  std::vector<int> leaders;
  for (const auto& [domain, members] : by_domain) leaders.push_back(members.front());
  for (auto& level : tree_levels(leaders, in.options.tree_fan_in_network, in.sizes.state_bytes)) {
    reduce_levels.push_back(level);
  }
  return {reduce_levels, domain_levels};
}

// One all-to-all that sends each owner, from every other rank, `bytes_per_unit` for each of the units
// (sequences or heads) `owned(owner)` gives it; merge_fraction: the most units a rank merges, of `units`.
// Example: pass-q with 4 sequences on 2 ranks: each rank sends the other 2 sequences' partial states.
template <typename Owned>
std::optional<Phase> all_to_all_home(PhaseRole role, int ranks, long long units, double bytes_per_unit,
                                     const char* label, Owned owned) {
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
  return Phase{.kind = PhaseKind::transfers,
               .role = role,
               .label = label,
               .sends = sends,
               .merge_states = ranks,
               .merge_fraction = static_cast<double>(most) / static_cast<double>(units)};
}

}  // namespace

Phase attention_phase() {
  return {.kind = PhaseKind::attend, .role = PhaseRole::attention, .label = "flash-decoding over the local shard"};
}

std::vector<Phase> tree_lse_phases(const PhaseInputs& in) {
  const auto [reduce_levels, domain_levels] = reduce_levels_of(in);
  std::vector<Phase> phases{attention_phase()};
  for (size_t l = 0; l < reduce_levels.size(); ++l) {
    const char* tier = l < domain_levels ? "inside domains" : "across domains";
    phases.push_back({.kind = PhaseKind::transfers,
                      .role = PhaseRole::state_reduce,
                      .label = std::string("reduce (o, lse) ") + tier,
                      .sends = reduce_levels[l],
                      .merge_states = most_incoming(reduce_levels[l]) + 1});
  }
  for (size_t l = reduce_levels.size(); l-- > 0;) {
    std::vector<Transfer> down;
    for (const Transfer& up : reduce_levels[l]) down.push_back({up.to, up.from, in.sizes.o_bytes});
    const char* tier = l < domain_levels ? "inside domains" : "across domains";
    phases.push_back({.kind = PhaseKind::transfers,
                      .role = PhaseRole::output_broadcast,
                      .label = std::string("broadcast o ") + tier,
                      .sends = down});
  }
  return phases;
}

std::vector<Phase> pass_q_phases(const PhaseInputs& in) {
  const int batch = in.workload.batch;
  std::vector<Phase> phases{{.kind = PhaseKind::q_ring,
                             .role = PhaseRole::q_ring,
                             .label = "pass query blocks around the ring, attending each to the local shard"}};
  const auto back = all_to_all_home(PhaseRole::states_to_sequence_owners, in.ranks, batch, in.sizes.state_bytes / batch,
                                    "all-to-all: partial (o, lse) to each sequence's owner",
                                    [&](int owner) { return owned_sequences(batch, in.ranks, owner).count; });
  if (back) phases.push_back(*back);
  return phases;
}

std::vector<Phase> a2a_phases(const PhaseInputs& in) {
  const int heads = in.workload.query_heads;
  std::vector<Phase> phases{attention_phase()};
  const auto exchange = all_to_all_home(PhaseRole::states_to_head_owners, in.ranks, heads, in.sizes.state_bytes / heads,
                                        "all-to-all: (o, lse) of each head slice to its owner",
                                        [&](int owner) { return owned_heads(heads, in.ranks, owner).count; });
  if (exchange) phases.push_back(*exchange);
  return phases;
}

}  // namespace treering::model::detail
