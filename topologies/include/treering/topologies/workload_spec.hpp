// A decoding workload: the shape of the attention that runs for each new token, as a plain description.
// Presets and derived quantities live in the model (treering/model/workload.hpp); files load here.
#pragma once

#include <string>

namespace treering::topologies {

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

// A workload file (YAML):
//   name: my-model            # required
//   description: "..."        # optional
//   source: "config.json of ..."  # optional
//   layers: 32                # required, >= 1
//   query_heads: 32           # required
//   kv_heads: 8               # required; query_heads must be a multiple
//   head_dim: 128             # required
//   parameters: 8.03e9        # optional (default 0: attention only)
//   dtype: bf16               # optional: bf16 (default) or fp16
//   batch: 1                  # optional (default 1)
// hidden_size is query_heads x head_dim. Errors are InputError with FILE:LINE:COL.
Workload load_workload_file(const std::string& path);

}  // namespace treering::topologies
