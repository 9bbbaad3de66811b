// Decoding workloads: the shape of the attention that runs for each new token. Pure data, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "treering/topologies/workload_spec.hpp"

namespace treering::model {

// The shape itself is a plain description, loadable from YAML, so it lives with the other descriptions.
using Workload = topologies::Workload;

// Throws std::invalid_argument when the shape is impossible (non-positive sizes, query heads not a multiple
// of KV heads, hidden size different from query_heads * head_dim, unknown dtype).
void validate(const Workload& workload);

// Bytes of K and V cached per token of one sequence, over all layers:
// 2 (K and V) * kv_heads * head_dim * dtype_bytes * layers.
// Example: llama3.1-8b = 2 * 8 * 128 * 2 B * 32 = 131072 B (128 KiB) per token.
double kv_cache_bytes_per_token(const Workload& workload);

// The built-in presets, sorted by name: paper-mha16, llama3.1-8b, llama3.2-1b, llama3.1-70b, llama3.1-405b,
// llama3.1-405b-fp8, mixtral-8x7b.
const std::vector<Workload>& workload_presets();

// A preset by name; throws std::invalid_argument naming the presets when unknown.
const Workload& find_workload(std::string_view name);

}  // namespace treering::model
