// The made-up inputs of a real run, one piece of code for the host and the device: the value at a position is a
// hash of (stream, index), so every rank makes only its own shard, the GPU makes its inputs in its own memory
// (no host copy of a long context), and the reference can be computed for any head without storing the rest.
#pragma once

#include <cstdint>

#include "treering/realrun/merge.hpp"  // TREERING_HOST_DEVICE

namespace treering::realrun {

// splitmix64 of (stream, index) -> [-1, 1), 53 random bits rounded to float.
// Example: stream 0, index 0 -> z = 0x632BE59BD9B4E019 before mixing; every value lies in [-1, 1).
TREERING_HOST_DEVICE inline float hashed_value(std::uint64_t stream, std::uint64_t index) {
  std::uint64_t z = stream * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

// The streams of a decode's q, K and V for a seed (make_inputs in decode_run.hpp): q's index is its place in
// [b][n_h][d], K's and V's token x kv_values_per_token + place in [b][n_kv][d].
TREERING_HOST_DEVICE constexpr std::uint64_t q_stream(std::uint64_t seed) { return seed * 3 + 0; }
TREERING_HOST_DEVICE constexpr std::uint64_t k_stream(std::uint64_t seed) { return seed * 3 + 1; }
TREERING_HOST_DEVICE constexpr std::uint64_t v_stream(std::uint64_t seed) { return seed * 3 + 2; }

}  // namespace treering::realrun
