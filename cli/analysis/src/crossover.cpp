#include "treering/analysis/crossover.hpp"

namespace treering::analysis {

std::optional<long long> wins_from(const std::vector<LengthOutcome>& by_length) {
  std::optional<long long> from;
  for (auto it = by_length.rbegin(); it != by_length.rend(); ++it) {  // longest first
    if (it->outcome == Outcome::no_contest) continue;
    if (it->outcome == Outcome::loses) break;
    from = it->seq_len;
  }
  return from;
}

}  // namespace treering::analysis
