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
  // The rest of the model, for --scope layer|step (0: unknown; the step then spreads `parameters` over the
  // layers' MLPs). Names follow Hugging Face's config.json.
  int intermediate_size = 0;                    // the dense MLP's width (gate, up: hidden -> this; down: back)
  int vocab_size = 0;                           // the embedding and LM head's rows
  bool tie_word_embeddings = false;             // the LM head is the embedding table (held once)
  int max_position_embeddings = 0;              // the model's context length (0: unknown); engines size buffers by it
  std::string weight_dtype = "bf16";            // bf16 | fp16 | fp8: the MLP's (or the experts') weights
  double weight_bytes = 2;                      //   2 for bf16/fp16, 1 for fp8
  std::string attention_weight_dtype = "bf16";  // the QKV and output projections' (embedding, LM head: dtype)
  double attention_weight_bytes = 2;
  double mean_weight_bytes = 0;  // bytes per parameter over the whole model (0: dtype_bytes); derived from
                                 // the parts by model::complete_weights, never read from a file
  int experts = 0;               // routed experts per MoE layer (0: dense MLP)
  int experts_per_token = 0;     // experts each token routes to
  // Every sequence of the batch is the same prompt decoded greedily (a benchmark replicating one input): their tokens,
  // and so their routing, are identical, and an MoE layer touches one token's experts whatever the batch (the MLP split
  // by tensor parallelism; expert parallelism's routing does not read it). Set by the engine benchmark readers, never
  // read from a workload file.
  bool identical_sequences = false;
  int shared_experts = 0;           // experts every token runs
  int moe_intermediate_size = 0;    // one expert's width (0: intermediate_size)
  int first_k_dense_replace = 0;    // MoE models: the first layers keep a dense MLP of intermediate_size
  int expert_groups = 0;            // n_group: routed experts in groups (0: none) ...
  int expert_groups_per_token = 0;  // ... of which a token's experts come from topk_group
  int weight_block_size = 0;        // fp8 weights scaled per block x block tile (fp32 scales; 0: per tensor)
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2), in Hugging Face's names; kv_lora_rank 0: none. The cache
  // holds one latent of kv_lora_rank + qk_rope_head_dim values per token and layer, shared by every query head.
  // Decode runs it absorbed (W_UK folded into the query, W_UV applied to the output), as FlashMLA and the serving
  // engines do: one KV head whose keys are the whole latent and whose values are its first kv_lora_rank values. So a
  // latent-attention workload has kv_heads 1 and head_dim kv_lora_rank + qk_rope_head_dim (the kernel's key width).
  // Example: DeepSeek-V3: 512 + 64 = 576 values per token and layer, 1,152 B in bf16; 61 layers: 70,272 B.
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;             // a head's query and key width without the rotary part
  int v_head_dim = 0;                   // a head's value width before the output projection
  int q_lora_rank = 0;                  // the query's compressed width (0: queries projected from the hidden state)
  std::string kv_cache_dtype = "bf16";  // the cached K/V (or latent) element: bf16 | fp16, or fp8 for a latent
  int kv_cache_bytes = 2;
};

// A workload file (YAML):
//   name: my-model            # required
//   description: "..."        # optional
//   source: "config.json of ..."  # optional
//   layers: 32                # required, >= 1
//   query_heads: 32           # required
//   kv_heads: 8               # required (latent attention: 1, may be left out); query_heads a multiple
//   head_dim: 128             # required (latent attention: kv_lora_rank + qk_rope_head_dim, may be left out)
//   parameters: 8.03e9        # optional (default 0: attention only)
//   dtype: bf16               # optional: bf16 (default) or fp16
//   batch: 1                  # optional (default 1)
//   intermediate_size: 14336  # optional: the MLP's width (for --scope layer|step)
//   vocab_size: 128256        # optional: the embedding and LM head
//   tie_word_embeddings: false  # optional
//   max_position_embeddings: 8192  # optional: the context length (engines size buffers by it)
//   weight_dtype: fp8         # optional: the MLP's weights, bf16, fp16 or fp8 (default: dtype)
//   attention_weight_dtype: bf16  # optional: the QKV and output projections' (default: dtype)
//   experts: 8                # optional MoE: routed experts per layer, with
//   experts_per_token: 2      #   the experts each token uses (required with experts),
//   shared_experts: 0         #   experts every token runs (default 0) and
//   moe_intermediate_size: 0  #   one expert's width (default: intermediate_size)
//   first_k_dense_replace: 3  # optional MoE: leading layers with a dense MLP (intermediate_size)
//   n_group: 8                # optional MoE: expert groups, with
//   topk_group: 4             #   the groups a token's experts come from
//   weight_block_size: 128    # optional: fp8 weights' scale tile (128 x 128)
//   kv_lora_rank: 512         # optional multi-head latent attention (all four required together, q_lora_rank
//   qk_rope_head_dim: 64      #   optional): kv_heads and head_dim may then be left out (1 and kv_lora_rank +
//   qk_nope_head_dim: 128     #   qk_rope_head_dim) and hidden_size is required
//   v_head_dim: 128
//   q_lora_rank: 1536
//   hidden_size: 7168         # required with latent attention; otherwise query_heads x head_dim
//   kv_cache_dtype: fp8       # optional: bf16, fp16 (default: dtype), or fp8 for a latent cache
// Keys of one kind only (qk_rope_head_dim without kv_lora_rank, n_group without experts, ...) and unknown keys are
// errors. Example: topologies/workloads/deepseek-v3.yaml. Errors are InputError with FILE:LINE:COL.
Workload load_workload_file(const std::string& path);

// A Hugging Face config.json (what a model's repository ships): model_type llama, mistral, mixtral or qwen2
// (grouped-query attention): num_hidden_layers, num_attention_heads, hidden_size, intermediate_size and vocab_size
// required; num_key_value_heads (default: num_attention_heads), head_dim (default: hidden_size / heads),
// num_local_experts / num_experts_per_tok read. model_type deepseek_v2, deepseek_v3 or kimi_k2 (multi-head latent
// attention, hf_config_latent.cpp): kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim required,
// q_lora_rank (null: 0) read, num_key_value_heads ignored (kv_heads 1, head_dim kv_lora_rank + qk_rope_head_dim);
// n_routed_experts, num_experts_per_tok, n_shared_experts, moe_intermediate_size, first_k_dense_replace, n_group and
// topk_group read, moe_layer_freq other than 1 refused; num_nextn_predict_layers (the MTP module) left out, as the
// description says; routing and training keys (topk_method, scoring_func, routed_scaling_factor, rope_scaling, ...)
// accepted and left alone. Every family: tie_word_embeddings, torch_dtype and an fp8 quantization_config
// (weight_block_size [B, B]: block-scaled) read; keys that would change the attention treering models (sliding
// windows in use, latent attention in another model_type) refuse the file. Errors are InputError with
// FILE:LINE:COL of the offending key. The model's validate() runs after (treering::analysis::load_workload).
Workload load_hf_config_file(const std::string& path);

}  // namespace treering::topologies
