// The split-KV decode kernel's arithmetic and indexing, one piece of code for the device (realrun/src/cuda/
// attention.cu) and the host (its CPU emulation and tests in make test, which runs without a GPU).
//
// The kernel, FlashDecoding-style: the shard's tokens are cut into `chunks`; one CTA per (sequence, KV head,
// group of up to 8 query heads sharing that KV head, chunk) reads each K/V row of its chunk once for all the
// query heads it serves (grouped-query attention). A CTA is 4 warps; a token's row of d 16-bit values is read
// with 128-bit loads by d/8 lanes (a "lane group": 16 lanes for d = 128, 8 for d = 64), so a warp reads 2 (or 4)
// tokens at once, and each lane group issues the loads of 4 tokens' K and V before it uses the first. Scores
// are kept in log2 units (q pre-scaled by log2(e)/sqrt(d), exp2f), and each lane group keeps an online softmax
// updated once per tile; the CTA's lane groups are merged through shared memory into the chunk's state, and the
// chunks' states by merge.hpp's rule (natural log: lse = ln 2 x log2-sum), as the CPU kernel's.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "treering/realrun/merge.hpp"  // TREERING_HOST_DEVICE

namespace treering::realrun::split_kv {

constexpr int kLanes = 32;
constexpr int kWarps = 4;              // per CTA: 128 threads
constexpr int kValuesPerLoad = 8;      // 16-bit values in one 128-bit load
constexpr int kTokensInFlight = 4;     // tokens whose K and V loads a lane group issues before using the first
constexpr int kMaxHeadsPerCta = 8;     // query heads one CTA serves: 8 x 8 q values and accumulators per lane
constexpr int kMinChunkTokens = 16;    // chunks are not cut shorter (their fixed cost would dominate)
constexpr int kMaxChunks = 65535;      // the grid's y dimension
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Lanes per token row, lane groups per warp and per CTA, tokens per tile (all groups, all slots in flight).
// d = 128: 16 lanes, 2 groups per warp, 8 per CTA, 32 tokens per tile; d = 64: 8, 4, 16, 64.
TREERING_HOST_DEVICE constexpr int lanes_per_token(int head_dim) { return head_dim / kValuesPerLoad; }
TREERING_HOST_DEVICE constexpr int groups_per_warp(int head_dim) { return kLanes / lanes_per_token(head_dim); }
TREERING_HOST_DEVICE constexpr int groups_per_cta(int head_dim) { return kWarps * groups_per_warp(head_dim); }
TREERING_HOST_DEVICE constexpr int tokens_per_tile(int head_dim) { return groups_per_cta(head_dim) * kTokensInFlight; }

// Where a thread works: its CTA-wide lane group and the first of the 8 head-dim values it loads.
// Example, d = 128: warp 1, lane 21 -> group 2 + 21 / 16 = 3, values 5 x 8 = 40 ... 47.
struct LanePlace {
  int group = 0;
  int first_value = 0;
};
TREERING_HOST_DEVICE constexpr LanePlace lane_place(int head_dim, int warp, int lane) {
  return {warp * groups_per_warp(head_dim) + lane / lanes_per_token(head_dim), (lane % lanes_per_token(head_dim)) * kValuesPerLoad};
}

// The token lane group `group` reads in slot `slot` of tile `tile` of a chunk beginning at `begin`: in one slot the
// CTA's groups read consecutive tokens. Example, d = 128, begin 64: tile 1, slot 2, group 5 -> 64 + 32 + 16 + 5 = 117.
TREERING_HOST_DEVICE constexpr long long token_at(long long begin, int head_dim, long long tile, int slot, int group) {
  return begin + tile * tokens_per_tile(head_dim) + static_cast<long long>(slot) * groups_per_cta(head_dim) + group;
}

// Chunk `chunk` of `chunks` over `tokens` tokens: [begin, end), ceil(tokens / chunks) each, the last shorter, any
// beyond the end empty. Example: 100 tokens in 7 chunks of 15: chunk 6 is [90, 100).
struct TokenRange {
  long long begin = 0;
  long long end = 0;
};
TREERING_HOST_DEVICE constexpr TokenRange chunk_range(long long tokens, int chunks, int chunk) {
  const long long per_chunk = (tokens + chunks - 1) / chunks;
  const long long begin = chunk * per_chunk < tokens ? chunk * per_chunk : tokens;
  const long long end = begin + per_chunk < tokens ? begin + per_chunk : tokens;
  return {begin, end};
}

// Query heads per CTA: the largest of 8, 4, 2, 1 dividing the group size g = n_h / n_kv (so a K/V row is read
// g / heads_per_cta times). Examples: g = 8 -> 8; g = 16 -> 8 (read twice); g = 6 -> 2; MHA (g = 1) -> 1.
TREERING_HOST_DEVICE constexpr int heads_per_cta(int query_heads, int kv_heads) {
  const int group = query_heads / kv_heads;
  return group % 8 == 0 ? 8 : group % 4 == 0 ? 4 : group % 2 == 0 ? 2 : 1;
}

// What CTA x (of batch x n_kv x head blocks, in that order) serves: its sequence, KV head and first query head.
// Example: n_h 32, n_kv 4 (g 8, one head block): CTA 6 -> sequence 1, KV head 2, query heads 16 ... 23.
struct CtaPlace {
  int sequence = 0;
  int kv_head = 0;
  int first_query_head = 0;
};
TREERING_HOST_DEVICE constexpr CtaPlace cta_place(int cta, int query_heads, int kv_heads) {
  const int heads = heads_per_cta(query_heads, kv_heads);
  const int head_blocks = query_heads / kv_heads / heads;
  const int kv_index = cta / head_blocks;
  return {kv_index / kv_heads, kv_index % kv_heads, (kv_index % kv_heads) * (query_heads / kv_heads) + (cta % head_blocks) * heads};
}

// Chunks per CTA so that the grid fills the device at least twice over (a second wave evens out CTAs that finish
// early): ceil(2 x sms x resident_per_sm / ctas), but no chunk shorter than kMinChunkTokens, at least 1, at most
// kMaxChunks. `ctas`: CTAs without splitting (batch x n_kv x head blocks); `resident_per_sm`: CTAs an SM holds at
// once (the occupancy calculator's). Example: H100 (132 SMs), 4 resident, batch 1 x 16 KV heads of MHA (16 CTAs),
// 2,048 tokens: ceil(1,056 / 16) = 66 chunks of 32 tokens: 1,056 CTAs, 2 waves; at 100,000 tokens still 66 chunks
// (1,516 tokens each); 64 sequences x 8 KV heads (512 CTAs): 3 chunks.
TREERING_HOST_DEVICE constexpr int choose_chunks(int sms, int resident_per_sm, long long ctas, long long tokens) {
  const long long two_waves = 2LL * sms * resident_per_sm;
  const long long wanted = (two_waves + ctas - 1) / ctas;
  const long long most = tokens / kMinChunkTokens > 1 ? tokens / kMinChunkTokens : 1;
  const long long chunks = wanted < most ? wanted : most;
  return static_cast<int>(chunks < 1 ? 1 : chunks > kMaxChunks ? kMaxChunks : chunks);
}

// One lane's online-softmax update over a tile, for one query head: s2[u] are the scores of the tile's first
// `valid` slots in log2 units, v[u] the lane's kValuesPerLoad values of those tokens' V. The running max m2 and
// sum l, and the lane's accumulator (unnormalised, relative to 2^m2), are rescaled once per tile:
//   m2' = max(m2, max_u s2_u);  l' = l 2^(m2 - m2') + sum_u 2^(s2_u - m2');  acc' = acc 2^(m2 - m2') + sum_u 2^(s2_u - m2') v_u
// Example: m2 = 0, l = 1, acc = 1; one token s2 = 1, v = 3 -> m2' = 1, l' = 0.5 + 1 = 1.5, acc' = 0.5 + 3 = 3.5
// (o = acc / l = 7/3: the weights 1 and 2 of values 1 and 3).
TREERING_HOST_DEVICE inline void online_softmax_tile(float& m2, float& l, float* acc, const float* s2,
                                                     const float (*v)[kValuesPerLoad], int valid) {
  if (valid <= 0) return;
  float top = m2;
  for (int u = 0; u < kTokensInFlight; ++u) {  // fixed bounds, guarded: the kernel keeps the arrays in registers
    if (u < valid) top = s2[u] > top ? s2[u] : top;
  }
  const float rescale = exp2f(m2 - top);  // m2 = -inf at first: 0
  l *= rescale;
  for (int i = 0; i < kValuesPerLoad; ++i) acc[i] *= rescale;
  for (int u = 0; u < kTokensInFlight; ++u) {
    if (u >= valid) continue;
    const float p = exp2f(s2[u] - top);
    l += p;
    for (int i = 0; i < kValuesPerLoad; ++i) acc[i] += p * v[u][i];
  }
  m2 = top;
}

// The CTA's lane groups' states of one head merged into its chunk's state: `count` (m2, l) pairs `stride` apart.
// top2 = the largest m2 of a non-empty group; total = sum l_g 2^(m2_g - top2); a group's accumulator weighs
// 2^(m2_g - top2) / total in the normalised o, and lse = ln 2 (top2 + log2 total), natural log as merge.hpp's.
// Example: two groups (m2 0, l 1) and (m2 1, l 1): top2 1, total 1.5, weights 1/3 and 2/3, lse = ln 2 + ln 1.5 = ln 3.
struct GroupMerge {
  float top2 = -std::numeric_limits<float>::infinity();
  float total = 0;
  TREERING_HOST_DEVICE float weight(float m2, float l) const { return l > 0.0f ? exp2f(m2 - top2) / total : 0.0f; }
  TREERING_HOST_DEVICE float lse() const { return total > 0.0f ? (top2 + log2f(total)) * kLn2 : -std::numeric_limits<float>::infinity(); }
};
TREERING_HOST_DEVICE inline GroupMerge merge_groups(const float* m2, const float* l, int count, int stride) {
  GroupMerge merge;
  for (int g = 0; g < count; ++g) {
    if (l[g * stride] > 0.0f && m2[g * stride] > merge.top2) merge.top2 = m2[g * stride];
  }
  for (int g = 0; g < count; ++g) {
    if (l[g * stride] > 0.0f) merge.total += l[g * stride] * exp2f(m2[g * stride] - merge.top2);
  }
  return merge;
}

}  // namespace treering::realrun::split_kv
