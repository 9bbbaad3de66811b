// The CUDA kernel emulated on the CPU (split_kv_emulation.hpp) against the double-precision reference and the CPU
// kernel, over the shapes the kernel dispatches differently: head dims 64 and 128, MHA and GQA groups of 4, 6, 8
// and 16 (1, 2, 4 and 8 query heads per CTA), one chunk, a few, and the device heuristic's.
//
// Tolerances, from the arithmetic: inputs are 16-bit (exact in fp32); a score sums d = 128 products of values
// ~N(0, 1) scaled by log2(e)/sqrt(d), each rounding at most u = 2^-24 relative, so its absolute error is at most
// ~d u |q||k|/sqrt(d) <= 128 x 6e-8 x 3 ~ 2e-5 in the worst case and ~sqrt(d) u ~ 1e-6 typically; exp2f adds 2 ulp.
// A weight's relative error is the score's absolute error, and o is a convex mix, so o's normwise error is of the
// same order: the reference within 1e-4 (5x the worst case), the CPU kernel (the same float arithmetic in another
// order, natural-log exp) within 2e-5.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "random_inputs.hpp"
#include "split_kv_emulation.hpp"

using namespace treering::realrun;
using treering::realrun::testing::random_halves;

namespace {

struct Emulated {
  std::vector<float> o, lse;
};

Emulated emulate(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q, const std::vector<std::uint16_t>& k,
                 const std::vector<std::uint16_t>& v, long long tokens, int chunks, std::vector<int>* reads = nullptr) {
  Emulated out{std::vector<float>(static_cast<size_t>(shape.q_values())), std::vector<float>(static_cast<size_t>(shape.states()))};
  testing::emulate_split_kv(shape, dtype, q.data(), k.data(), v.data(), tokens, chunks, out.o.data(), out.lse.data(), reads);
  return out;
}

}  // namespace

TEST_CASE("the emulated CUDA kernel equals the reference and the CPU kernel") {
  for (const AttentionShape shape : {AttentionShape{1, 4, 4, 64}, AttentionShape{2, 8, 2, 128}, AttentionShape{1, 12, 2, 64},
                                     AttentionShape{1, 16, 2, 128}, AttentionShape{1, 32, 2, 128}}) {
    for (Dtype dtype : {Dtype::bf16, Dtype::fp16}) {
      for (long long tokens : {1LL, 37LL, 700LL}) {
        const testing::KernelCase c = testing::kernel_case(shape, dtype, tokens);
        const auto& [q, k, v, reference, cpu_o, cpu_lse] = c;
        const long long ctas = shape.states() / split_kv::heads_per_cta(shape.query_heads, shape.kv_heads);
        for (int chunks : {1, 3, split_kv::choose_chunks(132, 2, ctas, tokens)}) {
          std::vector<int> reads;
          const Emulated gpu = emulate(shape, dtype, q, k, v, tokens, chunks, &reads);
          CAPTURE(shape.query_heads);
          CAPTURE(shape.kv_heads);
          CAPTURE(shape.head_dim);
          CAPTURE(tokens);
          CAPTURE(chunks);
          CHECK(max_relative_error(gpu.o.data(), reference, shape.head_dim) < 1e-4);
          const std::vector<double> cpu(cpu_o.begin(), cpu_o.end());
          CHECK(max_relative_error(gpu.o.data(), cpu, shape.head_dim) < 2e-5);
          for (size_t s = 0; s < gpu.lse.size(); ++s) CHECK(gpu.lse[s] == doctest::Approx(cpu_lse[s]).epsilon(2e-5));
          bool each_once = true;
          for (int count : reads) each_once = each_once && count == 1;
          CHECK(each_once);  // every K/V value loaded once per block of query heads
        }
      }
    }
  }
}

TEST_CASE("the emulated kernel over an empty shard and over chunks beyond the tokens") {
  const AttentionShape shape{1, 8, 2, 64};
  const auto q = random_halves(Dtype::bf16, static_cast<size_t>(shape.q_values()), 1);
  const Emulated empty = emulate(shape, Dtype::bf16, q, {}, {}, 0, 1);
  for (float lse : empty.lse) CHECK(lse == -INFINITY);
  for (float o : empty.o) CHECK(o == 0.0f);
  // 5 tokens in 9 chunks: chunks 5 ... 8 are empty and weigh nothing in the merge.
  const auto k = random_halves(Dtype::bf16, static_cast<size_t>(5 * shape.kv_values_per_token()), 2);
  const auto v = random_halves(Dtype::bf16, static_cast<size_t>(5 * shape.kv_values_per_token()), 3);
  const std::vector<double> reference = reference_attention(shape, Dtype::bf16, q.data(), k.data(), v.data(), 5);
  CHECK(max_relative_error(emulate(shape, Dtype::bf16, q, k, v, 5, 9).o.data(), reference, shape.head_dim) < 1e-4);
}
