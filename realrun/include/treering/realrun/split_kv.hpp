// The split-KV decode kernel's indexing and arithmetic, one piece of code for the device (realrun/src/cuda/
// attention.cu) and the host (its CPU emulation and tests in make test, which runs without a GPU).
//
// The kernel, FlashDecoding-style on tensor cores: the shard's tokens are cut into `chunks`; one CTA per
// (sequence, KV head, block of up to 16 query heads sharing that KV head, chunk). The block's query heads are the
// 16 rows (M) of an mma.sync.m16n8k16 (bf16 or fp16 inputs, fp32 accumulators); rows past the group are zero and
// never written. A CTA is 4 warps that work independently: warp w takes the chunk's warp tiles w, w + 4, ... (16
// tokens for d = 128, 32 for d = 64: 4 KB of K and 4 KB of V), copies each into its own shared memory with cp.async,
// 3 stages deep, and for each 16 tokens computes S = Q K^T (K rows as the B operand, by ldmatrix), an online
// softmax in log2 units on S's accumulators, and O += P V (V by ldmatrix.trans). P is split into two 16-bit parts
// (hi + lo, each an MMA) so that the weights keep ~16 significant bits, as the fp32 CPU kernel's. At the end the
// 4 warps' states are merged through shared memory into the chunk's state, and the last CTA of a head block to
// finish (an atomic count) merges the chunks' states by merge.hpp's rule: one launch, lse in natural log.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "treering/realrun/merge.hpp"  // TREERING_HOST_DEVICE

namespace treering::realrun::split_kv {

constexpr int kLanes = 32;
constexpr int kWarps = 4;          // per CTA: 128 threads
constexpr int kRows = 16;          // query heads per CTA: the M of the MMA
constexpr int kStages = 3;         // cp.async stages per warp
constexpr int kValuesPerSlot = 8;  // 16-bit values in a 16-byte shared-memory slot (one cp.async, one ldmatrix row)
constexpr int kMaxChunks = 65535;  // the grid's y dimension
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Tokens one warp stages at once (2,048 values of K, and as many of V): d = 128: 16, d = 64: 32; the CTA's four
// warps together: 64 or 128. Slots per row: d / 8. A stage: K then V, 4,096 16-bit values (8 KB).
TREERING_HOST_DEVICE constexpr int warp_tile_tokens(int head_dim) { return 2048 / head_dim; }
TREERING_HOST_DEVICE constexpr int cta_tile_tokens(int head_dim) { return kWarps * warp_tile_tokens(head_dim); }
TREERING_HOST_DEVICE constexpr int slots_per_row(int head_dim) { return head_dim / kValuesPerSlot; }
TREERING_HOST_DEVICE constexpr int stage_values(int head_dim) { return 2 * warp_tile_tokens(head_dim) * head_dim; }
// Dynamic shared memory of a CTA: 4 warps x 3 stages x 8 KB = 96 KB (two CTAs fit an H100 SM's 227 KB).
constexpr int shared_bytes(int head_dim) { return kWarps * kStages * stage_values(head_dim) * 2; }

// Where slot `slot` of row `row` of a warp tile lives (in slots from the tile's start): the slot index XOR the
// row's low 3 bits, so that the 8 rows one ldmatrix reads (the same slot of 8 consecutive rows) fall in 8
// different 16-byte bank groups. Example, d = 128 (16 slots a row): row 5, slot 2 -> 5 x 16 + (2 ^ 5) = 87.
TREERING_HOST_DEVICE constexpr int swizzled_slot(int head_dim, int row, int slot) {
  return row * slots_per_row(head_dim) + (slot ^ (row & 7));
}

// A row and slot of a warp tile.
struct TilePlace {
  int row = 0;
  int slot = 0;
};

// The copy of a warp tile: step `step` of copy_steps, lane `lane` moves piece step x 32 + lane, consecutive lanes
// consecutive slots of a row (coalesced). Example, d = 128: step 3, lane 20 -> piece 116 = row 7, slot 4.
TREERING_HOST_DEVICE constexpr int copy_steps(int head_dim) {
  return warp_tile_tokens(head_dim) * slots_per_row(head_dim) / kLanes;
}
TREERING_HOST_DEVICE constexpr TilePlace copy_piece(int head_dim, int step, int lane) {
  return {(step * kLanes + lane) / slots_per_row(head_dim), (step * kLanes + lane) % slots_per_row(head_dim)};
}

// The row addresses of one ldmatrix.x4 (lanes 8m ... 8m + 7 give the 8 rows of matrix m) for the K fragments of
// k-step `ks` (head-dim values 16 ks ... 16 ks + 15) over the 16 tokens 16 u ... 16 u + 15 of the warp tile:
// matrices (tokens 0-7, slot 2 ks), (tokens 0-7, slot 2 ks + 1), (tokens 8-15, slot 2 ks), (tokens 8-15, 2 ks + 1),
// i.e. the B registers {b0b1, b2b3} of the n-tile of tokens 0-7, then of tokens 8-15.
// Example: ks 3, u 1, lane 21 (matrix 2, row 5) -> row 16 + 8 + 5 = 29, slot 6.
TREERING_HOST_DEVICE constexpr TilePlace k_matrix_row(int ks, int u, int lane) {
  return {16 * u + (lane / 8 / 2) * 8 + lane % 8, 2 * ks + (lane / 8) % 2};
}
// The same for ldmatrix.x4.trans of V for head-dim values 16 np ... 16 np + 15 (n-tiles 2 np and 2 np + 1) over
// tokens 16 u ... 16 u + 15 (the k of P V): matrices (tokens 0-7, slot 2 np), (tokens 8-15, slot 2 np),
// (tokens 0-7, slot 2 np + 1), (tokens 8-15, slot 2 np + 1): the B registers of n-tile 2 np, then of 2 np + 1.
// Example: np 2, u 0, lane 13 (matrix 1, row 5) -> row 8 + 5 = 13, slot 4.
TREERING_HOST_DEVICE constexpr TilePlace v_matrix_row(int np, int u, int lane) {
  return {16 * u + ((lane / 8) % 2) * 8 + lane % 8, 2 * np + lane / 8 / 2};
}

// The m16n8k16 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"); lane l, g = l / 4
// the group, t = l % 4 the thread in the group:
//   accumulator c_i (i 0-3): row g + 8 (i / 2), column 2 t + i % 2;
//   A register j (0-3), half h: row g + 8 (j % 2), column 2 t + 8 (j / 2) + h;
//   B register j (0-1), half h: row (k) 2 t + 8 j + h, column (n) g.
// So the accumulators of the two n-tiles of 16 tokens are, in order, the A registers of those 16 tokens as the k of
// P V: A register j = the n-tile j / 2's accumulators 2 (j % 2), 2 (j % 2) + 1.
TREERING_HOST_DEVICE constexpr int accumulator_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
TREERING_HOST_DEVICE constexpr int accumulator_col(int lane, int i) { return 2 * (lane % 4) + i % 2; }
TREERING_HOST_DEVICE constexpr int a_row(int lane, int j) { return lane / 4 + 8 * (j % 2); }
TREERING_HOST_DEVICE constexpr int a_col(int lane, int j, int h) { return 2 * (lane % 4) + 8 * (j / 2) + h; }

// Query-head blocks per KV head (16 rows each, the last one padded) and what CTA x (of batch x n_kv x blocks, in
// that order) serves. Examples: g = 8 -> 1 block of 8 rows; g = 40 -> 3 blocks (16, 16, 8 rows).
// n_h 32, n_kv 4 (g 8): CTA 6 -> sequence 1, KV head 2, query heads 16 ... 23.
TREERING_HOST_DEVICE constexpr int head_blocks(int query_heads, int kv_heads) {
  return (query_heads / kv_heads + kRows - 1) / kRows;
}
struct CtaPlace {
  int sequence = 0;
  int kv_head = 0;
  int first_query_head = 0;
  int rows = 0;  // query heads served, at most kRows
};
TREERING_HOST_DEVICE constexpr CtaPlace cta_place(int cta, int query_heads, int kv_heads) {
  const int group = query_heads / kv_heads, blocks = head_blocks(query_heads, kv_heads);
  const int kv_index = cta / blocks, block = cta % blocks;
  const int rows = group - block * kRows < kRows ? group - block * kRows : kRows;
  return {kv_index / kv_heads, kv_index % kv_heads, (kv_index % kv_heads) * group + block * kRows, rows};
}

// Chunks per CTA so that one wave fills the device without a partial second one (all CTAs do equal work, so a
// second wave would only add a tail): floor(sms x resident / ctas), at least 1; no chunk shorter than the CTA's
// tile (64 tokens for d = 128, 128 for d = 64); at most kMaxChunks. `ctas`: CTAs without splitting (batch x n_kv x
// head blocks); `resident_per_sm`: CTAs an SM holds at once (the occupancy calculator's).
// Examples (H100, 132 SMs, 2 resident): 8 KV heads at 131,072 tokens (d 128): 264 / 8 = 33 chunks; 16 KV heads:
// 16; 1,024 tokens over 8 KV heads: 1,024 / 64 = 16; 64 sequences x 8 KV heads (512 CTAs): 1.
TREERING_HOST_DEVICE constexpr int choose_chunks(int sms, int resident_per_sm, long long ctas, long long tokens,
                                                 int head_dim) {
  const long long wave = static_cast<long long>(sms) * resident_per_sm / (ctas > 0 ? ctas : 1);
  const long long most = tokens / cta_tile_tokens(head_dim);
  long long chunks = wave < most ? wave : most;
  return static_cast<int>(chunks < 1 ? 1 : chunks > kMaxChunks ? kMaxChunks : chunks);
}

// Chunk `chunk` of `chunks` over `tokens` tokens: [begin, end), each ceil(tokens / chunks) rounded up to whole warp
// tiles (so only the last chunk has a partial tile), the last shorter, any beyond the end empty.
// Example, d = 128 (16-token warp tiles): 1,000 tokens in 3 chunks: 334 -> 336 a chunk: [0, 336), [336, 672), [672,
// 1000).
struct TokenRange {
  long long begin = 0;
  long long end = 0;
};
TREERING_HOST_DEVICE constexpr TokenRange chunk_range(long long tokens, int chunks, int chunk, int head_dim) {
  const long long tile = warp_tile_tokens(head_dim);
  const long long per_chunk = ((tokens + chunks - 1) / chunks + tile - 1) / tile * tile;
  const long long begin = chunk * per_chunk < tokens ? chunk * per_chunk : tokens;
  const long long end = begin + per_chunk < tokens ? begin + per_chunk : tokens;
  return {begin, end};
}

// Warp `warp`'s tiles of a chunk: tile i covers the chunk's tokens from (i x 4 + warp) x W, W = warp_tile_tokens.
// Example, d = 128, a chunk of 100 tokens: warp 0 has tiles at 0 and 64, warp 2 at 32 and 96, warp 3 at 48 only.
TREERING_HOST_DEVICE constexpr long long warp_tile_begin(int head_dim, int warp, long long tile) {
  return (tile * kWarps + warp) * warp_tile_tokens(head_dim);
}
TREERING_HOST_DEVICE constexpr long long warp_tiles(int head_dim, int warp, long long chunk_tokens) {
  const long long first = warp_tile_begin(head_dim, warp, 0);
  return chunk_tokens > first ? (chunk_tokens - first + cta_tile_tokens(head_dim) - 1) / cta_tile_tokens(head_dim) : 0;
}

// One row's online-softmax step over a batch of scores (log2 units) whose largest is `batch_top`: the new running
// max m2' = max(m2, batch_top); the factor that rescales the old sum and accumulators, 2^(m2 - m2'); and the
// offset the batch's weights are taken from (p = 2^(s - offset)): m2', or 0 while the row has seen only -inf
// (masked tokens), so that no -inf - -inf appears. Example: m2 = 1, batch_top = 3 -> m2' = 3, rescale 1/4.
struct RowStep {
  float top = 0;
  float rescale = 0;
  float offset = 0;
};
TREERING_HOST_DEVICE inline RowStep row_step(float m2, float batch_top) {
  const float top = batch_top > m2 ? batch_top : m2;
  const float offset = top == -std::numeric_limits<float>::infinity() ? 0.0f : top;
  return {top, exp2f(m2 - offset), offset};
}

// The warps' states of one row merged into the CTA's: `count` (m2, l) pairs `stride` apart. top2 = the largest m2 of
// a non-empty state; total = sum l_w 2^(m2_w - top2); a state's unnormalised accumulator weighs 2^(m2_w - top2) /
// total in the normalised o, and lse = ln 2 (top2 + log2 total), natural log as merge.hpp's.
// Example: two states (m2 0, l 1) and (m2 1, l 1): top2 1, total 1.5, weights 1/3 and 2/3, lse = ln 2 + ln 1.5 = ln 3.
struct GroupMerge {
  float top2 = -std::numeric_limits<float>::infinity();
  float total = 0;
  TREERING_HOST_DEVICE float weight(float m2, float l) const { return l > 0.0f ? exp2f(m2 - top2) / total : 0.0f; }
  TREERING_HOST_DEVICE float lse() const {
    return total > 0.0f ? (top2 + log2f(total)) * kLn2 : -std::numeric_limits<float>::infinity();
  }
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
