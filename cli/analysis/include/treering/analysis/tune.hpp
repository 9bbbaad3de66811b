// What `treering tune` reports of model::tune's strategies: the distinct ones, equivalents folded in.
#pragma once

#include <utility>
#include <vector>

#include "treering/model/tune.hpp"

namespace treering::analysis {

// The strategies (fastest first) with equivalents folded into the first of them: the same algorithm and a latency
// equal to 1e-9 relative (a leader that changes nothing on a symmetric cluster; fan-in 8 in an 8-GPU node is all
// at once), each with the count folded into it. Example: tree 10 us, tree 10 us, ring 12 us -> (tree, 1), (ring, 0).
std::vector<std::pair<const model::TunedStrategy*, int>> fold_equivalents(
    const std::vector<model::TunedStrategy>& tuned);

}  // namespace treering::analysis
