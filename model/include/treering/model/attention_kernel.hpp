// The launch geometry of the split-KV decode attention kernel that treering-realrun runs (one launch,
// FlashDecoding-style): how it cuts a shard into chunks, which sets the two costs besides streaming the shard that a
// calibration by shape fits (topologies::AttentionShapeCalibration): the split's merge, one state per chunk, and a
// GPU not yet full of CTAs at short shards.
//
// CTAs without splitting: batch x KV heads x ceil(group / 16) (a CTA serves up to 16 query heads of one KV head, the
// rows of its tensor-core tile). One wave: multiprocessors x 2 resident CTAs (96 KB of shared memory each; an H100 or
// H200 SM has 228 KB). Chunks: as many as one wave holds without a partial second, floor(wave / CTAs), but none
// shorter than the CTA's tile of 8,192 / head_dim tokens (64 at head dim 128), and at least one.
// Example (H100, 132 SMs, llama3.1-8b: batch 1, 8 KV heads, group 4, head dim 128): 8 CTAs, a wave of 264: 33 chunks
// from 33 x 64 = 2,112 tokens on; at 1,000 tokens floor(1,000 / 64) = 15.
#pragma once

#include "treering/model/workload.hpp"

namespace treering::model {

inline constexpr int kSplitKvResidentCtas = 2;   // per SM (H100/H200); 1 on GPUs whose SMs hold less than 192 KB
inline constexpr int kSplitKvQueryRows = 16;     // query heads per CTA
inline constexpr int kSplitKvTileValues = 8192;  // a CTA tile's tokens x head dim

struct SplitKvShape {
  int batch = 1;
  int kv_heads = 1;
  int group = 1;  // query heads per KV head
  int head_dim = 128;
};

// The kernel's shape for a workload: its batch, KV heads, query heads per KV head and head dim.
SplitKvShape split_kv_shape(const Workload& workload);

// CTAs of one launch without splitting: batch x KV heads x query-head blocks.
long long split_kv_ctas(const SplitKvShape& shape);

// The chunks the kernel cuts `tokens` into on a GPU with `multiprocessors` SMs (>= 1); 1 for no tokens.
int split_kv_chunks(const SplitKvShape& shape, int multiprocessors, long long tokens);

}  // namespace treering::model
