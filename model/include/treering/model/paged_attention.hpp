// A serving engine's decode attention when it runs vLLM's PagedAttention kernels (topologies::PagedAttention) in
// place of the model's own kernel: which of the two kernels runs, the bytes it reads, and the time. Pure.
//
// vllm/attention/ops/paged_attn.py (v0.6) picks v1 where the longest context is <= 8,192 tokens and either it fits one
// 512-token partition or sequences x query heads > 512, else v2. Decode steps replay CUDA graphs captured with the
// longest context they serve (vLLM's capture metadata: max_decode_seq_len = max_seq_len_to_capture, min(max_model_len,
// 8,192)), so up to that context the pick is made for it, not for the live context; longer contexts run eagerly. Both
// launch a thread block per (sequence, query head) that reads its K/V head's cache, so every query head reads the K/V:
// sequences x query heads x context x 2 x head dim x element bytes a layer. Example: llama3-8b at TP 2 (16 query heads
// a GPU), 32 sequences at context 1,024: 32 x 16 = 512, not above 512 -> v2; 32 x 16 x 1,024 x 2 x 128 x 2 B = 268 MB a
// layer.
#pragma once

#include "treering/model/workload.hpp"
#include "treering/topologies/impl_profile.hpp"

namespace treering::model {

inline constexpr long long kPagedAttentionPartitionTokens = 512;  // _PARTITION_SIZE
inline constexpr long long kPagedAttentionV1MaxContext = 8192;    // v1 keeps a whole context's logits in shared memory
inline constexpr long long kPagedAttentionV1MinSequenceHeads = 513;  // v1 from more than 512 (sequence, head) blocks

struct PagedAttentionReads {  // one GPU; bytes read by each kernel (one of them is 0 for a single step and layer)
  double v1_bytes = 0;
  double v2_bytes = 0;
  double v1_occupancy_scale = 1;  // v1's time against its rate at an 8,192-token capture (paged_v1_occupancy_scale)
};

// One layer on one GPU of `slice` (layout.hpp's head slice: its batch and query heads) at `context` tokens, the
// kernel picked for `captured_tokens` where the context is within them (0: eager, for the live context). Throws
// InputError for latent attention (vLLM decodes it with its MLA backends, not PagedAttention). Example: one sequence
// of 32 heads at 300 tokens: eager, one partition -> v1; from a graph captured at 8,192 tokens, 16 partitions and
// 32 blocks -> v2.
PagedAttentionReads paged_attention_reads(const Workload& slice, long long context, long long captured_tokens = 0);

// The context the engine's graphs are captured for: min(max_position_embeddings, max_seq_len_to_capture); an unknown
// context length is taken as the capture's.
long long paged_attention_captured_tokens(const Workload& workload, const topologies::PagedAttention& kernels);

// v1's time at `workload`'s capture over its time at an 8,192-token one (topologies::PagedAttention): the blocks a
// multiprocessor holds at 8,192 tokens over those it holds at min(max_position_embeddings, max_seq_len_to_capture)
// tokens (rounded up to vLLM's 16-token blocks; an unknown context length is taken as the capture's), each block
// holding its logits, 4 B a token; 1 without a shared-memory figure. Example: MI300X's 64 KiB, Llama 2 (4,096
// positions): 2 blocks at 8,192, 4 at 4,096 -> 0.5.
double paged_v1_occupancy_scale(const Workload& workload, const topologies::PagedAttention& kernels);

// The reads at the profile's efficiencies of `hbm_rated_Bps` (v1's scaled by its occupancy). Example: the 268 MB above
// by v2 at 1.2 x 5.3 TB/s: 42 us.
double paged_attention_s(const PagedAttentionReads& reads, const topologies::PagedAttention& kernels,
                         double hbm_rated_Bps);

}  // namespace treering::model
