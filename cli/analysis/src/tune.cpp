#include "treering/analysis/tune.hpp"

#include <cmath>

namespace treering::analysis {

std::vector<std::pair<const model::TunedStrategy*, int>> fold_equivalents(
    const std::vector<model::TunedStrategy>& tuned) {
  std::vector<std::pair<const model::TunedStrategy*, int>> out;
  for (const model::TunedStrategy& t : tuned) {
    if (!out.empty() && out.back().first->strategy.algorithm == t.strategy.algorithm &&
        std::abs(out.back().first->result.latency_s - t.result.latency_s) <= 1e-9 * t.result.latency_s) {
      ++out.back().second;
      continue;
    }
    out.push_back({&t, 0});
  }
  return out;
}

}  // namespace treering::analysis
