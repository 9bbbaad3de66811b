// Decoding workloads: the shape of the attention that runs for each new token. Pure data, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace treering::model {

struct Workload {
  std::string name;
  std::string description;
  std::string source;          // where the figures come from
  int layers = 0;              // attention layers decoded per token
  int query_heads = 0;         // n_h
  int kv_heads = 0;            // grouped-query attention: query_heads is a multiple of kv_heads
  int head_dim = 0;            // d_h
  int hidden_size = 0;         // model width d; for attention, query_heads * head_dim
  double parameters = 0;       // model parameter count (0 for an attention-only microbenchmark)
  int dtype_bytes = 2;         // K, V, q and o element size (16-bit: 2)
  std::string dtype = "bf16";  // bf16 | fp16
  int batch = 1;               // sequences decoded together
};

// Throws std::invalid_argument when the shape is impossible (non-positive sizes, query heads not a multiple
// of KV heads, hidden size different from query_heads * head_dim, unknown dtype).
void validate(const Workload& workload);

// Bytes of K and V cached per token of one sequence, over all layers:
// 2 (K and V) * kv_heads * head_dim * dtype_bytes * layers.
// Example: llama3.1-8b = 2 * 8 * 128 * 2 B * 32 = 131072 B (128 KiB) per token.
double kv_cache_bytes_per_token(const Workload& workload);

// The built-in presets, sorted by name: paper-mha16, llama3.1-8b, llama3.2-1b, llama3.1-70b.
const std::vector<Workload>& workload_presets();

// A preset by name; throws std::invalid_argument naming the presets when unknown.
const Workload& find_workload(std::string_view name);

}  // namespace treering::model
