// How a ring collective cuts its buffer, shared by the model's byte counts (plan_bytes.cpp) and the real runs'
// rings (realrun), so that what the model counts is what the rings send.
#pragma once

#include <cstddef>

namespace treering::model {

// Chunk `index` of `parts` of a buffer of `total` elements: the first total mod parts chunks one element longer.
// Example: 16 elements in 3: (first 0, count 6), (6, 5), (11, 5).
struct RingChunk {
  std::size_t first = 0;
  std::size_t count = 0;
};
RingChunk ring_chunk(std::size_t total, int parts, int index);

// value mod n in [0, n): ring_wrap(-1, 4) = 3.
int ring_wrap(int value, int n);

}  // namespace treering::model
