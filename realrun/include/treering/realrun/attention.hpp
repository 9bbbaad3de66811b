// Split-KV flash-decoding on the CPU: the partial attention of one decoding step over a shard of the KV cache,
// 16-bit inputs, fp32 accumulation, grouped-query attention; and a double-precision reference of full
// attention to check every algorithm against.
//
// Layouts (b batch, n_h query heads, n_kv KV heads, d head dim; query head h reads KV head h / (n_h / n_kv)):
//   q:       [b][n_h][d]                16-bit
//   K and V: [token][b][n_kv][d]        16-bit (one token's K, or V, for the whole batch is contiguous)
//   o:       [b][n_h][d]                fp32, normalised over the shard's tokens
//   lse:     [b][n_h]                   fp32, natural log (merge.hpp); -inf for an empty shard
// Multi-head latent attention in absorbed form (MLA, as FlashMLA runs it at decode) is the same kernel with one KV
// head whose keys are the latent [c_kv ; k_pe] (d = kv_lora_rank + qk_rope_head_dim) and whose values are the
// first value_dim = kv_lora_rank values of the same rows: pass the latent as both k and v; o is then
// [b][n_h][value_dim], and the scores are scaled by 1 / sqrt(scale_dim) (qk_nope + qk_rope head dims), not d.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "treering/realrun/half.hpp"

namespace treering::realrun {

struct AttentionShape {
  int batch = 1;
  int query_heads = 1;
  int kv_heads = 1;
  int head_dim = 64;  // the key width (q's and K's)
  int value_dim = 0;  // 0: head_dim; less: only the first value_dim values of each V row (laid out as K's) count
  int scale_dim = 0;  // the scores are q.k / sqrt(scale_dim); 0: head_dim
  int value_width() const { return value_dim > 0 ? value_dim : head_dim; }
  int scale_width() const { return scale_dim > 0 ? scale_dim : head_dim; }
  long long q_values() const { return static_cast<long long>(batch) * query_heads * head_dim; }
  long long o_values() const { return static_cast<long long>(batch) * query_heads * value_width(); }
  long long kv_values_per_token() const { return static_cast<long long>(batch) * kv_heads * head_dim; }  // K or V
  long long states() const { return static_cast<long long>(batch) * query_heads; }
};

// Throws topologies::InputError unless all are positive, query_heads is a multiple of kv_heads and value_dim and
// scale_dim are 0 or positive, value_dim at most head_dim.
void check_shape(const AttentionShape& shape);

// o and lse over `tokens` tokens of k and v (each tokens x kv_values_per_token 16-bit values).
void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse);

// Full attention in double precision from the same 16-bit inputs: o only ([b][n_h][value width]).
std::vector<double> reference_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q,
                                        const std::uint16_t* k, const std::uint16_t* v, long long tokens);

// The relative error of o against the reference, per head and normwise: for each (sequence, head), the largest
// |o_i - ref_i| over the largest |ref_i| of that head; the worst head's. (Element by element, values near zero
// would turn rounding into large relative errors.) Example: ref (1, 0.001), o (1, 0.0011) -> 1e-4. A NaN or
// infinite output makes it infinite (std::max would otherwise skip a NaN and let it pass).
double max_relative_error(const float* values, const std::vector<double>& reference, int head_dim);
// The same over the values in `spans` ([first, first + count) of the output) only: each value's error over the
// largest |ref| of its head (a span may cut a head: a reduce-scatter's chunks are not head-aligned).
double max_relative_error(const float* values, const std::vector<double>& reference, int head_dim,
                          const std::vector<std::pair<long long, long long>>& spans);

// How many of `count` values are NaN or infinite.
long long count_non_finite(const float* values, std::size_t count);

}  // namespace treering::realrun
