// The small kernels of a real decode step (step_run.hpp): everything but the GEMMs (cuBLASLt) and the attention
// (cuda_attention.hpp). bf16 in and out, fp32 arithmetic. Each launches on `stream` and throws std::runtime_error
// when the launch fails. Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace treering::realrun::cuda::detail {

using bf16_bits = std::uint16_t;  // a bf16 value's bits, as the attention kernel takes them

// values[i] = bf16(hashed_value(stream_id, i) x scale): uniform in [-scale, scale), never all zeros.
void fill_uniform(bf16_bits* values, std::size_t count, std::uint64_t stream_id, float scale, cudaStream_t stream);

// y[b] = x[b] / sqrt(mean(x[b]^2) + eps) * weight, rows of `hidden` (a multiple of 8; the rows and the weight
// 16-byte aligned), `rows` of them (Llama's RMSNorm, eps 1e-5).
void rms_norm(const bf16_bits* x, const bf16_bits* weight, bf16_bits* y, int rows, int hidden, cudaStream_t stream);

struct RopeAppend {
  const bf16_bits* qkv = nullptr;  // [batch][(query_heads + 2 kv_heads) x head_dim]: q heads, then k, then v
  bf16_bits* q = nullptr;          // [batch][query_heads][head_dim], rotated
  bf16_bits* k_cache = nullptr;    // [token][batch][kv_heads][head_dim]; row `position` written (k rotated)
  bf16_bits* v_cache = nullptr;
  int batch = 1, query_heads = 1, kv_heads = 1, head_dim = 64;
  long long position = 0;
  float theta = 500000.0f;  // RoPE's base (Llama 3: 500,000)
};
// RoPE (rotate-half pairs i, i + d/2 by position x theta^(-2i/d)) on q and k; q to its buffer, k and v appended.
void rope_append(const RopeAppend& args, cudaStream_t stream);

// out[i] = bf16(in[i]) (the attention's fp32 output to the output projection's input).
void to_bf16(const float* in, bf16_bits* out, std::size_t count, cudaStream_t stream);

// a[b][i] = silu(gate_up[b][i]) x gate_up[b][width + i], i < width.
void silu_mul(const bf16_bits* gate_up, bf16_bits* a, int rows, int width, cudaStream_t stream);

constexpr int kMaxLoopbackRanks = 8;
struct RankPointers {
  const bf16_bits* partial[kMaxLoopbackRanks] = {};
  bf16_bits* x[kMaxLoopbackRanks] = {};
};
// Every rank's x[i] += sum over ranks of partial[i] (the loopback's all-reduce of partial sums, fused with the
// residual add), i < count.
void allreduce_add(const RankPointers& ranks, int rank_count, std::size_t count, cudaStream_t stream);

// next[b] = the lowest index of the largest logits[b][v], v < vocab.
void argmax_rows(const bf16_bits* logits, int rows, int vocab, int* next, cudaStream_t stream);

}  // namespace treering::realrun::cuda::detail
