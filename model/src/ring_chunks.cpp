#include "treering/model/ring_chunks.hpp"

#include <algorithm>

namespace treering::model {

RingChunk ring_chunk(std::size_t total, int parts, int index) {
  const std::size_t base = total / static_cast<std::size_t>(parts);
  const std::size_t extra = total % static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

int ring_wrap(int value, int n) { return ((value % n) + n) % n; }

}  // namespace treering::model
