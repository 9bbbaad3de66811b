// Normally distributed 16-bit test inputs, reproducible by seed (shared by the CPU and GPU kernel tests).
#pragma once

#include <random>
#include <vector>

#include "treering/realrun/half.hpp"

namespace treering::realrun::testing {

inline std::vector<std::uint16_t> random_halves(Dtype dtype, size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint16_t> values(count);
  for (auto& value : values) value = to_half(dtype, normal(generator));
  return values;
}

}  // namespace treering::realrun::testing
