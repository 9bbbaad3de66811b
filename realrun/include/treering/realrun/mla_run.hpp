// Multi-head latent attention (MLA, DeepSeek-V2/V3) decoding on the cpu backend, in the absorbed form FlashMLA and
// serving engines run at decode, with decode context parallelism (DCP, as vLLM runs it) over the ranks.
//
// Absorbed form: a query head's q_abs = [W_UK_h^T q_nope_h ; q_pe_h] (kv_lora_rank + qk_rope_head_dim values)
// attends to the cached latents [c_kv ; k_pe] themselves (one KV head shared by every query head), the values
// being c_kv (the first kv_lora_rank values); scores are scaled by 1 / sqrt(qk_nope_head_dim + qk_rope_head_dim),
// the unabsorbed head width. The output per head is a kv_lora_rank-vector o_lat (W_UV_h o_lat is then the head's
// output, outside attention). attention.hpp's kernel runs it with absorbed_shape().
//
// DCP: the latents of each sequence split by tokens over the ranks (the plan's shards, model::split_tokens); each
// rank made its own head slice's queries (model::owned_heads) and all-gathers them first; each attends every head
// over its shard; then the plan's combine merges the partial states, kv_lora_rank values wide: a2a, ag-rs, or a
// tree (tree, tree-fused, tree-lse, allgather-merge). ring and pass-q, which move K/V or queries, are not run.
#pragma once

#include <cstdint>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/realrun/attention.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/realrun/transport.hpp"

namespace treering::realrun {

struct MlaShape {
  int batch = 1;
  int heads = 1;                                          // query heads
  int kv_lora_rank = 0;                                   // c_kv's width: the absorbed kernel's value width
  int rope_dim = 0;                                       // qk_rope_head_dim: k_pe's width
  int nope_dim = 0;                                       // qk_nope_head_dim
  int v_head_dim = 0;                                     // a head's output width after W_UV
  int latent() const { return kv_lora_rank + rope_dim; }  // the cached values per token: the key width
};

// Throws topologies::InputError unless the workload has latent attention (model::has_latent_attention).
MlaShape mla_shape_of(const model::Workload& workload);

// The absorbed kernel's shape: one KV head, keys latent() wide, values the first kv_lora_rank, scores scaled by
// 1 / sqrt(nope_dim + rope_dim). Example: deepseek-v3, batch 1: 128 query heads, head dim 576, value dim 512,
// scale dim 192.
AttentionShape absorbed_shape(const MlaShape& shape);

// The workload whose plans combine MLA's partial states: grouped-query attention of the same batch and query
// heads, one KV head, head_dim kv_lora_rank (a state's width), so that the model's plans (and their bytes) are the
// combine's. Example: deepseek-v3 -> 128 query heads, 1 KV head, head_dim 512.
model::Workload combine_workload(const model::Workload& mla);

// Deterministic inputs in [-1, 1) (input_hash.hpp): q_abs of the heads in `heads` of every sequence
// ([b][heads.count][latent], hashed at their place in the full [b][n_h][latent]), and the latents of tokens
// [first, first + count) ([token][b][latent]).
std::vector<std::uint16_t> mla_queries(const MlaShape& shape, Dtype dtype, model::Shard heads, std::uint64_t seed);
std::vector<std::uint16_t> mla_latents(const MlaShape& shape, Dtype dtype, long long first, long long count,
                                       std::uint64_t seed);

// The one-rank reference: the absorbed attention of every head over tokens [0, tokens) in double precision from the
// same 16-bit inputs, o_lat [b][n_h][kv_lora_rank].
std::vector<double> mla_reference(const MlaShape& shape, Dtype dtype, std::uint64_t seed, long long tokens);

// Bytes each rank sends in the query all-gather: a ring all-gather of equal blocks, each the largest head slice's
// queries (smaller slices padded): (p - 1) x b x ceil(n_h / p) x latent x 2 bytes; 0 on one rank.
// Example: deepseek-v3, batch 1, 4 ranks: 3 x 32 x 576 x 2 = 110,592 B.
double mla_query_gather_bytes(const MlaShape& shape, int ranks);

// Runs `combine_plan` (made for combine_workload() with plan_options(Backend::cpu)) as rank transport.rank(): the
// query all-gather and the absorbed attention over the rank's shard in place of the plan's attention, then the
// plan's combine. RankResult::o is o_lat, [b][n_h][kv_lora_rank], the rank's held part filled (held_output).
// Throws topologies::InputError for ring or pass-q.
RankResult run_mla_plan(const model::DecodePlan& combine_plan, const MlaShape& shape, Dtype dtype, Transport& transport,
                        std::uint64_t seed);

}  // namespace treering::realrun
