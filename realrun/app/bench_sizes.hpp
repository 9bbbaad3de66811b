// What `treering-realrun bench --for-plan` measures: the very sizes the decode plans will use, so that a
// calibration interpolates at them instead of extrapolating a line fitted elsewhere (a host's copies slow down
// 2.5x once a message leaves its caches; a fit below that knee predicts a ring of larger blocks 2.7x too fast).
// - sendrecv: every send of the plans (ring blocks, tree-lse's states), plus a ladder of sizes from 8 B by x4
//   up to the first at or above the largest send, so that the fit sees where the rate changes (its knees);
// - allreduce / allgather: the plans' collectives of that operation, plus the same ladder;
// - attention: the plans' kernels' token counts (shards and ring blocks), run by every rank at once as the
//   decode runs them (they share the host's memory bandwidth); a single count gets its half beside it, as a
//   line needs two sizes.
// Example: tree and ring at 2,000 and 8,000 tokens on 2 ranks (paper-mha16): sends of 8,192,000 and
// 32,768,000 B plus 8 B, 32 B, ... 16 MiB, 64 MiB; all-reduces of 64 and 8,192 B (fp32 partial states, as the
// cpu backend sends them) plus 8 B, 32 B, ... 2 KiB; attention over 1,000 and 4,000 tokens.
#pragma once

#include <string>
#include <vector>

#include "bench_command.hpp"

namespace treering::realrun::app {

struct BenchSizes {
  std::vector<double> bytes;      // collectives and sends, ascending
  std::vector<long long> tokens;  // attention, ascending
};

// For `options.kind` on `ranks` ranks. Throws std::invalid_argument when the plans use no such operation (a
// ring all-reduces nothing), or for hbm, which no plan sizes.
BenchSizes sizes_for_plans(const BenchOptions& options, int ranks);

// 8, 32, 128, ... up to the first size at or above `largest_bytes`.
std::vector<double> size_ladder(double largest_bytes);

}  // namespace treering::realrun::app
