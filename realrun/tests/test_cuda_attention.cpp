// The CUDA kernel against the double-precision reference (on a GPU: within 2e-3, 16-bit inputs and fp32
// accumulation, the states merged on the device). Without a usable device every case says why and passes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "random_inputs.hpp"
#include "treering/realrun/cuda_attention.hpp"

using namespace treering::realrun;
using treering::realrun::testing::random_halves;

namespace {

bool gpu_here() {
  std::string why;
  if (cuda::available(why)) return true;
  MESSAGE("skipped, no GPU: " << why);
  return false;
}

}  // namespace

TEST_CASE("CUDA partial attention equals the reference: bf16 and fp16, head dims 64 and 128, GQA, splits") {
  if (!gpu_here()) return;
  for (Dtype dtype : {Dtype::bf16, Dtype::fp16}) {
    for (const AttentionShape shape : {AttentionShape{2, 4, 2, 64}, AttentionShape{1, 16, 16, 128}, AttentionShape{3, 8, 1, 128}}) {
      for (long long tokens : {1LL, 257LL, 5000LL}) {
        const auto q = random_halves(dtype, static_cast<size_t>(shape.q_values()), 1);
        const auto k = random_halves(dtype, static_cast<size_t>(tokens * shape.kv_values_per_token()), 2);
        const auto v = random_halves(dtype, static_cast<size_t>(tokens * shape.kv_values_per_token()), 3);
        const std::vector<double> reference = reference_attention(shape, dtype, q.data(), k.data(), v.data(), tokens);
        for (int splits : {0, 1, 7}) {
          std::vector<float> o, lse;
          cuda::partial_attention_from_host(shape, dtype, q, k, v, tokens, o, lse, splits);
          CAPTURE(shape.head_dim);
          CAPTURE(tokens);
          CAPTURE(splits);
          CHECK(max_relative_error(o.data(), reference, shape.head_dim) < 2e-3);
          // The same state as the CPU kernel's: lse to fp32 rounding.
          std::vector<float> cpu_o(o.size()), cpu_lse(lse.size());
          treering::realrun::partial_attention(shape, dtype, q.data(), k.data(), v.data(), tokens, cpu_o.data(), cpu_lse.data());
          for (size_t s = 0; s < lse.size(); ++s) CHECK(lse[s] == doctest::Approx(cpu_lse[s]).epsilon(1e-4));
        }
      }
    }
  }
}

TEST_CASE("CUDA: an empty shard gives lse -inf and o 0, and other head dims are refused") {
  if (!gpu_here()) return;
  const AttentionShape shape{1, 2, 2, 64};
  std::vector<float> o, lse;
  cuda::partial_attention_from_host(shape, Dtype::bf16, std::vector<std::uint16_t>(128, 0), {}, {}, 0, o, lse, 0);
  CHECK(lse[0] == -std::numeric_limits<float>::infinity());
  CHECK(o[0] == 0.0f);
  CHECK_THROWS_AS(cuda::partial_attention_from_host({1, 1, 1, 96}, Dtype::bf16, std::vector<std::uint16_t>(96, 0), {}, {}, 0, o, lse, 0),
                  std::invalid_argument);
}
