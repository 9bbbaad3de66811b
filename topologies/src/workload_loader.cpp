#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"
#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

// The element type of a weight key: bf16 or fp16 (2 bytes), fp8 (1); absent: the workload's dtype.
void read_weight_dtype(const std::string& file, const yaml::StrictMap& map, const char* key,
                       const std::string& fallback, std::string& dtype, double& bytes) {
  dtype = map.has(key) ? map.string(key) : fallback;
  if (dtype == "bf16" || dtype == "fp16") {
    bytes = 2;
  } else if (dtype == "fp8") {
    bytes = 1;
  } else {
    yaml::fail(file, map.required(key), std::string(key) + " must be bf16, fp16 or fp8, got '" + dtype + "'");
  }
}

// The MLP, vocabulary, weight types and experts (--scope layer|step).
void read_model_rest(const std::string& file, const yaml::StrictMap& map, Workload& workload) {
  workload.intermediate_size = map.integer_or("intermediate_size", 1, 1 << 24, 0);
  workload.vocab_size = map.integer_or("vocab_size", 1, 1 << 24, 0);
  workload.tie_word_embeddings = map.boolean_or("tie_word_embeddings", false);
  workload.max_position_embeddings = map.integer_or("max_position_embeddings", 1, 1 << 30, 0);
  read_weight_dtype(file, map, "weight_dtype", workload.dtype, workload.weight_dtype, workload.weight_bytes);
  read_weight_dtype(file, map, "attention_weight_dtype", workload.dtype, workload.attention_weight_dtype,
                    workload.attention_weight_bytes);
  workload.experts = map.integer_or("experts", 1, 65536, 0);
  workload.moe_intermediate_size = map.integer_or("moe_intermediate_size", 1, 1 << 24, 0);
  workload.shared_experts = map.integer_or("shared_experts", 0, 65536, 0);
  if (workload.experts > 0) {
    workload.experts_per_token = map.integer("experts_per_token", 1, workload.experts);
    if (workload.intermediate_size == 0 && workload.moe_intermediate_size == 0) {
      yaml::fail(file, map.required("experts"),
                 "experts need intermediate_size or moe_intermediate_size (an expert's width)");
    }
  } else {
    for (const char* key : {"experts_per_token", "shared_experts", "moe_intermediate_size"}) {
      if (map.has(key))
        yaml::fail(file, map.required(key), std::string(key) + " is for MoE workloads: give experts too");
    }
  }
}

// Keys that belong to one kind of workload only: each present one is an error naming what it needs.
void refuse_keys(const std::string& file, const yaml::StrictMap& map, std::initializer_list<const char*> keys,
                 const std::string& why) {
  for (const char* key : keys) {
    if (map.has(key)) yaml::fail(file, map.required(key), std::string(key) + " " + why);
  }
}

// Multi-head latent attention (workload_spec.hpp): the four widths, one latent KV head of kv_lora_rank +
// qk_rope_head_dim values (kv_heads and head_dim may be left out; given, they must say so) and a hidden size of its
// own.
void read_latent_attention(const std::string& file, const yaml::StrictMap& map, Workload& w) {
  w.kv_lora_rank = map.integer("kv_lora_rank", 1, 65536);
  w.qk_rope_head_dim = map.integer("qk_rope_head_dim", 1, 65536);
  w.qk_nope_head_dim = map.integer("qk_nope_head_dim", 1, 65536);
  w.v_head_dim = map.integer("v_head_dim", 1, 65536);
  w.q_lora_rank = map.integer_or("q_lora_rank", 0, 1 << 24, 0);
  const int latent = w.kv_lora_rank + w.qk_rope_head_dim;
  w.kv_heads = map.integer_or("kv_heads", 1, 65536, 1);
  if (w.kv_heads != 1) {
    yaml::fail(file, map.required("kv_heads"),
               "kv_heads must be 1 with latent attention (the cache is one latent shared by every query head), got " +
                   std::to_string(w.kv_heads));
  }
  w.head_dim = map.integer_or("head_dim", 1, 131072, latent);
  if (w.head_dim != latent) {
    yaml::fail(file, map.required("head_dim"),
               "head_dim must be kv_lora_rank + qk_rope_head_dim (" + std::to_string(latent) +
                   ", the absorbed kernel's key width) with latent attention, got " + std::to_string(w.head_dim));
  }
  w.hidden_size = map.integer("hidden_size", 1, 1 << 24);
}

// Grouped-query (or multi-head) attention: kv_heads and head_dim required, hidden_size query_heads x head_dim.
void read_grouped_attention(const std::string& file, const yaml::StrictMap& map, Workload& w) {
  refuse_keys(file, map, {"qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "q_lora_rank"},
              "is for latent attention: give kv_lora_rank too");
  w.kv_heads = map.integer("kv_heads", 1, 65536);
  w.head_dim = map.integer("head_dim", 1, 65536);
  // hidden_size is an int: 65536 heads of 65536 would overflow it (undefined behaviour), so the product is bounded.
  const long long hidden_size = static_cast<long long>(w.query_heads) * w.head_dim;
  if (hidden_size > std::numeric_limits<int>::max()) {
    yaml::fail(file, map.required("head_dim"),
               "query_heads x head_dim (" + std::to_string(hidden_size) + ") is too large (at most " +
                   std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  w.hidden_size = static_cast<int>(hidden_size);
  if (map.has("hidden_size") && map.integer("hidden_size", 1, std::numeric_limits<int>::max()) != w.hidden_size) {
    yaml::fail(file, map.required("hidden_size"),
               "hidden_size must be query_heads x head_dim (" + std::to_string(hidden_size) +
                   ") without latent attention (kv_lora_rank)");
  }
}

void read_attention(const std::string& file, const yaml::StrictMap& map, Workload& w) {
  w.layers = map.integer("layers", 1, 100000);
  w.query_heads = map.integer("query_heads", 1, 65536);
  if (map.has("kv_lora_rank")) {
    read_latent_attention(file, map, w);
  } else {
    read_grouped_attention(file, map, w);
  }
  if (w.query_heads % w.kv_heads != 0) {
    yaml::fail(file, map.required("kv_heads"),
               "query_heads (" + std::to_string(w.query_heads) + ") must be a multiple of kv_heads (" +
                   std::to_string(w.kv_heads) + ")");
  }
}

// The cached K/V (or latent) element type: bf16 or fp16 (default: dtype), or fp8 for a latent cache.
void read_kv_cache_dtype(const std::string& file, const yaml::StrictMap& map, Workload& w) {
  w.kv_cache_dtype = map.has("kv_cache_dtype") ? map.string("kv_cache_dtype") : w.dtype;
  if (w.kv_cache_dtype == "bf16" || w.kv_cache_dtype == "fp16") {
    w.kv_cache_bytes = 2;
  } else if (w.kv_cache_dtype == "fp8") {
    w.kv_cache_bytes = 1;
    if (w.kv_lora_rank == 0) {
      yaml::fail(file, map.required("kv_cache_dtype"),
                 "an fp8 KV cache is modelled for latent attention only (give kv_lora_rank, or bf16 or fp16)");
    }
  } else {
    yaml::fail(file, map.required("kv_cache_dtype"),
               "kv_cache_dtype must be bf16, fp16 or fp8, got '" + w.kv_cache_dtype + "'");
  }
}

// MoE models' dense-first layers and expert groups (HF n_group / topk_group), and fp8 weights' scale tiles.
void read_moe_extras(const std::string& file, const yaml::StrictMap& map, Workload& w) {
  if (w.experts == 0) {
    refuse_keys(file, map, {"first_k_dense_replace", "n_group", "topk_group"},
                "is for MoE workloads: give experts too");
  }
  w.first_k_dense_replace = map.integer_or("first_k_dense_replace", 0, w.layers, 0);
  if (w.first_k_dense_replace > 0 && w.intermediate_size == 0) {
    yaml::fail(file, map.required("first_k_dense_replace"),
               "first_k_dense_replace needs intermediate_size (the dense layers' MLP width)");
  }
  w.expert_groups = map.integer_or("n_group", 1, 65536, 0);
  if (w.expert_groups > 0) {
    if (w.experts % w.expert_groups != 0) {
      yaml::fail(
          file, map.required("n_group"),
          "n_group (" + std::to_string(w.expert_groups) + ") must divide experts (" + std::to_string(w.experts) + ")");
    }
    w.expert_groups_per_token = map.integer("topk_group", 1, w.expert_groups);
  } else if (map.has("topk_group")) {
    yaml::fail(file, map.required("topk_group"), "topk_group needs n_group (the expert groups it picks from)");
  }
  w.weight_block_size = map.integer_or("weight_block_size", 1, 65536, 0);
  if (w.weight_block_size > 0 && w.weight_bytes != 1 && w.attention_weight_bytes != 1) {
    yaml::fail(file, map.required("weight_block_size"),
               "weight_block_size scales fp8 weights: give weight_dtype or attention_weight_dtype fp8");
  }
}

Workload read_workload(const std::string& file, const YAML::Node& root) {
  yaml::StrictMap map(root, file, "the workload",
                      {"name",
                       "description",
                       "source",
                       "layers",
                       "query_heads",
                       "kv_heads",
                       "head_dim",
                       "hidden_size",
                       "parameters",
                       "dtype",
                       "batch",
                       "intermediate_size",
                       "vocab_size",
                       "tie_word_embeddings",
                       "max_position_embeddings",
                       "weight_dtype",
                       "attention_weight_dtype",
                       "experts",
                       "experts_per_token",
                       "shared_experts",
                       "moe_intermediate_size",
                       "first_k_dense_replace",
                       "n_group",
                       "topk_group",
                       "weight_block_size",
                       "kv_lora_rank",
                       "qk_rope_head_dim",
                       "qk_nope_head_dim",
                       "v_head_dim",
                       "q_lora_rank",
                       "kv_cache_dtype"});
  Workload workload;
  workload.name = map.name("name");
  if (map.has("description")) workload.description = map.string("description");
  workload.source = map.has("source") ? map.string("source") : file;
  read_attention(file, map, workload);
  workload.parameters = map.number_or("parameters", 0.0, 1e15, 0.0);
  if (map.has("dtype")) {
    workload.dtype = map.string("dtype");
    if (workload.dtype != "bf16" && workload.dtype != "fp16") {
      yaml::fail(file, map.required("dtype"), "dtype must be bf16 or fp16, got '" + workload.dtype + "'");
    }
  }
  workload.batch = map.integer_or("batch", 1, 1000000, 1);
  read_kv_cache_dtype(file, map, workload);
  read_model_rest(file, map, workload);
  read_moe_extras(file, map, workload);
  return workload;
}

}  // namespace

Workload load_workload_file(const std::string& path) {
  const std::string text = read_input_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw InputError(yaml::location_of(path, error.mark), "YAML syntax: " + error.msg);
  }
  return read_workload(path, root);
}

}  // namespace treering::topologies
