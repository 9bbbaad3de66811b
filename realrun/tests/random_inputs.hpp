// Normally distributed 16-bit test inputs, reproducible by seed (shared by the CPU and GPU kernel tests).
#pragma once

#include <random>
#include <vector>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/half.hpp"

namespace treering::realrun::testing {

inline std::vector<std::uint16_t> random_halves(Dtype dtype, size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint16_t> values(count);
  for (auto& value : values) value = to_half(dtype, normal(generator));
  return values;
}

// Random q, K and V of a shape and length (seeds 1, 2, 3), with the double reference and the CPU kernel's state:
// what the kernel tests compare against.
struct KernelCase {
  std::vector<std::uint16_t> q, k, v;
  std::vector<double> reference;
  std::vector<float> cpu_o, cpu_lse;
};

inline KernelCase kernel_case(const AttentionShape& shape, Dtype dtype, long long tokens) {
  const auto kv = static_cast<size_t>(tokens * shape.kv_values_per_token());
  KernelCase c{random_halves(dtype, static_cast<size_t>(shape.q_values()), 1),
               random_halves(dtype, kv, 2),
               random_halves(dtype, kv, 3),
               {},
               std::vector<float>(static_cast<size_t>(shape.q_values())),
               std::vector<float>(static_cast<size_t>(shape.states()))};
  c.reference = reference_attention(shape, dtype, c.q.data(), c.k.data(), c.v.data(), tokens);
  partial_attention(shape, dtype, c.q.data(), c.k.data(), c.v.data(), tokens, c.cpu_o.data(), c.cpu_lse.data());
  return c;
}

}  // namespace treering::realrun::testing
