// output_held (plan.hpp): the part of the attention's output each rank holds when a plan ends.
#include <algorithm>
#include <stdexcept>

#include "treering/model/decode_algorithms.hpp"
#include "treering/model/plan.hpp"

namespace treering::model {

std::vector<ValueSpan> output_held(const DecodePlan& plan, int rank) {
  const int p = static_cast<int>(plan.gpus.size());
  if (rank < 0 || rank >= p) throw std::logic_error("no such rank");
  const Workload& w = plan.workload;
  const long long head_values = w.head_dim;
  const long long sequence_values = static_cast<long long>(w.query_heads) * head_values;
  const long long all_values = w.batch * sequence_values;
  switch (algorithm_info(plan).output_split) {
    case OutputSplit::replicated: return {{0, all_values}};
    case OutputSplit::by_sequence: {
      const Shard mine = owned_sequences(w.batch, p, rank);
      if (mine.count == 0) return {};
      return {{mine.first * sequence_values, mine.count * sequence_values}};
    }
    case OutputSplit::by_head: break;
  }
  const bool reduce_scattered = std::any_of(plan.phases.begin(), plan.phases.end(), [](const Phase& phase) {
    return phase.role == PhaseRole::rescaled_reduce_scatter;
  });
  if (reduce_scattered) {  // ag-rs: chunk `rank` of the reduce-scatter, cut as split_tokens cuts
    const Shard chunk = split_tokens(all_values, p)[static_cast<size_t>(rank)];
    if (chunk.count == 0) return {};
    return {{chunk.first, chunk.count}};
  }
  const Shard heads = owned_heads(w.query_heads, p, rank);  // a2a: the same heads of every sequence
  std::vector<ValueSpan> spans;
  for (long long sequence = 0; sequence < w.batch && heads.count > 0; ++sequence) {
    spans.push_back({sequence * sequence_values + heads.first * head_values, heads.count * head_values});
  }
  return spans;
}

}  // namespace treering::model
