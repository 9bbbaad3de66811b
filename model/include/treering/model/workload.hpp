// Decoding workloads: the shape of the attention that runs for each new token. Pure data, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "treering/topologies/workload_spec.hpp"

namespace treering::model {

// The shape itself is a plain description, loadable from YAML, so it lives with the other descriptions.
using Workload = topologies::Workload;

// Throws InputError when the shape is impossible (non-positive sizes, query heads not a multiple of KV heads, hidden
// size different from query_heads * head_dim without latent attention, a latent attention whose kv_heads is not 1 or
// head_dim not kv_lora_rank + qk_rope_head_dim, unknown dtype).
void validate(const Workload& workload);

// Bytes of K and V cached per token of one sequence, over all layers:
// 2 (K and V) * kv_heads * head_dim * kv_cache_bytes * layers; with latent attention the one latent,
// (kv_lora_rank + qk_rope_head_dim) * kv_cache_bytes * layers.
// Example: llama3.1-8b = 2 * 8 * 128 * 2 B * 32 = 131072 B (128 KiB) per token; deepseek-v3 (bf16 latent) =
// 576 * 2 B * 61 = 70,272 B.
double kv_cache_bytes_per_token(const Workload& workload);

// Values one layer caches per token of one sequence: 2 x kv_heads x head_dim (K and V), or the latent's head_dim
// (kv_lora_rank + qk_rope_head_dim) with latent attention. Of a head slice (layout.hpp): what one GPU holds.
double cached_values_per_token(const Workload& workload);

// Multi-head latent attention (Workload::kv_lora_rank > 0).
bool has_latent_attention(const Workload& workload);

// The attention kernel's output width per query head: head_dim, or kv_lora_rank with latent attention (the absorbed
// kernel's values are the latent's first kv_lora_rank values; W_UV then maps them to v_head_dim).
int attention_value_dim(const Workload& workload);

// Layers with a dense MLP (all of them for a dense model; first_k_dense_replace for an MoE model) and MoE layers.
int dense_mlp_layers(const Workload& workload);
int moe_layers(const Workload& workload);

// The built-in presets, sorted by name: deepseek-v2-lite, deepseek-v3, kimi-k2, llama3.1-405b, llama3.1-405b-fp8,
// llama3.1-70b, llama3.1-8b, llama3.2-1b, mixtral-8x7b, paper-mha16.
const std::vector<Workload>& workload_presets();

// A preset by name; throws std::invalid_argument naming the presets when unknown.
const Workload& find_workload(std::string_view name);

}  // namespace treering::model
