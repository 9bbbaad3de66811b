#include "treering/model/attention_kernel.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <stdexcept>

namespace treering::model {

SplitKvShape split_kv_shape(const Workload& workload) {
  if (workload.kv_heads < 1) throw topologies::InputError("a split-KV shape needs KV heads >= 1");
  return {workload.batch, workload.kv_heads, workload.query_heads / workload.kv_heads, workload.head_dim};
}

long long split_kv_ctas(const SplitKvShape& shape) {
  if (shape.batch < 1 || shape.kv_heads < 1 || shape.group < 1 || shape.head_dim < 1) {
    throw topologies::InputError("a split-KV shape needs batch, KV heads, group and head dim >= 1");
  }
  const long long blocks = (shape.group + kSplitKvQueryRows - 1) / kSplitKvQueryRows;
  return static_cast<long long>(shape.batch) * shape.kv_heads * blocks;
}

int split_kv_chunks(const SplitKvShape& shape, int multiprocessors, long long tokens) {
  if (multiprocessors < 1) throw topologies::InputError("the split-KV kernel's chunks need the GPU's multiprocessors");
  const long long wave = static_cast<long long>(multiprocessors) * kSplitKvResidentCtas / split_kv_ctas(shape);
  const long long tile_tokens = std::max(1, kSplitKvTileValues / shape.head_dim);
  const long long chunks = std::min(wave, std::max(0LL, tokens) / tile_tokens);
  return static_cast<int>(std::clamp(chunks, 1LL, 65535LL));  // the grid's y dimension holds at most 65,535
}

}  // namespace treering::model
