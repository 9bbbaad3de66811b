// What a plan sends point to point, per directed pair of ranks, worked out from its phases (not its p x 3
// steps per rank): which channels the replay needs and the bytes each carries. Private to sim.
#pragma once

#include <map>
#include <utility>

#include "treering/model/plan.hpp"

namespace treering::sim {

// (from rank, to rank) -> bytes over the whole plan. The ring's rank r forwards every block but its
// successor's own: sum of blocks - block(r + 1). Example: 4 ranks of 10 tokens, 8 KiB per token: each ring
// edge carries 30 tokens = 245,760 B.
std::map<std::pair<int, int>, double> point_to_point_bytes(const model::DecodePlan& plan);

}  // namespace treering::sim
