// The tensor-core kernel emulated on the CPU (tensor_core_emulation.hpp) against the double-precision reference and
// the CPU kernel, over the shapes the kernel handles differently: head dims 64 and 128 (one or two 16-token steps a
// warp tile), MHA (15 of 16 rows padding), GQA groups of 4, 6, 8 and 16, a group of 40 (three head blocks, the last
// padded), one chunk, a few, and the device heuristic's; lengths that end inside a 16-token step and a warp tile.
//
// Tolerances, from the arithmetic. Scores: products of 16-bit values are exact in fp32 and sums of d of them round
// at ~2^-24 relative, as the CPU kernel's (~1e-6 typically). Weights: p goes through the MMA as hi + lo, two 16-bit
// roundings: |p - hi - lo| <= 2^-9 x 2^-9 p = 2^-18 p (bf16; fp16 2^-22), 3.8e-6 relative. o = sum p v / sum p with
// the sum of p taken exact in fp32, so o's error is at most 2^-18 x max|v| over the head's max|o|; for N(0, 1)
// inputs and random signs of the rounding errors that is ~1e-6 typically, and within 1e-4 against the reference
// and 2e-5 against the CPU kernel (the budgets of the fp32 kernel this one replaced; see realrun/README.md).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "random_inputs.hpp"
#include "tensor_core_emulation.hpp"

using namespace treering::realrun;
using treering::realrun::testing::random_halves;

namespace {

struct Emulated {
  std::vector<float> o, lse;
};

Emulated emulate(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q,
                 const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v, long long tokens, int chunks,
                 std::vector<int>* reads = nullptr) {
  Emulated out{std::vector<float>(static_cast<size_t>(shape.q_values())),
               std::vector<float>(static_cast<size_t>(shape.states()))};
  testing::emulate_split_kv(shape, dtype, q.data(), k.data(), v.data(), tokens, chunks, out.o.data(), out.lse.data(),
                            reads);
  return out;
}

}  // namespace

TEST_CASE("the emulated tensor-core kernel equals the reference and the CPU kernel") {
  for (const AttentionShape shape :
       {AttentionShape{1, 4, 4, 64}, AttentionShape{2, 8, 2, 128}, AttentionShape{1, 12, 2, 64},
        AttentionShape{1, 16, 2, 128}, AttentionShape{1, 32, 2, 128}, AttentionShape{1, 40, 1, 64}}) {
    for (Dtype dtype : {Dtype::bf16, Dtype::fp16}) {
      for (long long tokens : {1LL, 37LL, 300LL}) {
        const testing::KernelCase c = testing::kernel_case(shape, dtype, tokens);
        const auto& [q, k, v, reference, cpu_o, cpu_lse] = c;
        const long long ctas = static_cast<long long>(shape.batch) * shape.kv_heads *
                               split_kv::head_blocks(shape.query_heads, shape.kv_heads);
        for (int chunks : {1, 3, split_kv::choose_chunks(132, 2, ctas, tokens, shape.head_dim)}) {
          std::vector<int> reads;
          const Emulated gpu = emulate(shape, dtype, q, k, v, tokens, chunks, &reads);
          CAPTURE(shape.query_heads);
          CAPTURE(shape.kv_heads);
          CAPTURE(shape.head_dim);
          CAPTURE(dtype == Dtype::bf16);
          CAPTURE(tokens);
          CAPTURE(chunks);
          CHECK(max_relative_error(gpu.o.data(), reference, shape.head_dim) < 1e-4);
          const std::vector<double> cpu(cpu_o.begin(), cpu_o.end());
          CHECK(max_relative_error(gpu.o.data(), cpu, shape.head_dim) < 2e-5);
          for (size_t s = 0; s < gpu.lse.size(); ++s)
            CHECK(gpu.lse[s] == doctest::Approx(cpu_lse[s]).scale(1e-12).epsilon(2e-5));
          bool each_once = true;
          for (int count : reads) each_once = each_once && count == 1;
          CHECK(each_once);  // every K value copied once per block of query heads
        }
      }
    }
  }
}

TEST_CASE("the emulated kernel over an empty shard, chunks beyond the tokens, and extreme scores") {
  const AttentionShape shape{1, 8, 2, 64};
  const auto q = random_halves(Dtype::bf16, static_cast<size_t>(shape.q_values()), 1);
  const Emulated empty = emulate(shape, Dtype::bf16, q, {}, {}, 0, 1);
  for (float lse : empty.lse) CHECK(lse == -INFINITY);
  for (float o : empty.o) CHECK(o == 0.0f);
  // 5 tokens in 9 chunks: chunks 1 ... 8 are empty (a chunk is whole 32-token warp tiles) and weigh nothing.
  const auto k = random_halves(Dtype::bf16, static_cast<size_t>(5 * shape.kv_values_per_token()), 2);
  const auto v = random_halves(Dtype::bf16, static_cast<size_t>(5 * shape.kv_values_per_token()), 3);
  const std::vector<double> reference = reference_attention(shape, Dtype::bf16, q.data(), k.data(), v.data(), 5);
  CHECK(max_relative_error(emulate(shape, Dtype::bf16, q, k, v, 5, 9).o.data(), reference, shape.head_dim) < 1e-4);
  // q and K scaled by 12: scores with a spread of ~144 (x 144 the unscaled ones' 1), weights from 1 down to far below
  // fp32's and fp16's smallest; the running max keeps every step finite and o still matches the reference.
  for (Dtype dtype : {Dtype::bf16, Dtype::fp16}) {
    auto big_q = random_halves(dtype, static_cast<size_t>(shape.q_values()), 4),
         big_k = random_halves(dtype, static_cast<size_t>(200 * shape.kv_values_per_token()), 5);
    for (auto& x : big_q) x = to_half(dtype, 12.0f * from_half(dtype, x));
    for (auto& x : big_k) x = to_half(dtype, 12.0f * from_half(dtype, x));
    const auto big_v = random_halves(dtype, big_k.size(), 6);
    const std::vector<double> ref = reference_attention(shape, dtype, big_q.data(), big_k.data(), big_v.data(), 200);
    CAPTURE(dtype == Dtype::bf16);
    CHECK(max_relative_error(emulate(shape, dtype, big_q, big_k, big_v, 200, 2).o.data(), ref, shape.head_dim) < 1e-4);
  }
}
