#include <fstream>
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

Workload read_workload(const std::string& file, const YAML::Node& root) {
  yaml::StrictMap map(
      root, file, "the workload",
      {"name", "description", "source", "layers", "query_heads", "kv_heads", "head_dim", "parameters", "dtype", "batch",
       "intermediate_size", "vocab_size", "tie_word_embeddings", "weight_dtype", "attention_weight_dtype", "experts",
       "experts_per_token", "shared_experts", "moe_intermediate_size"});
  Workload workload;
  workload.name = map.name("name");
  if (map.has("description")) workload.description = map.string("description");
  workload.source = map.has("source") ? map.string("source") : file;
  workload.layers = map.integer("layers", 1, 100000);
  workload.query_heads = map.integer("query_heads", 1, 65536);
  workload.kv_heads = map.integer("kv_heads", 1, 65536);
  workload.head_dim = map.integer("head_dim", 1, 65536);
  if (workload.query_heads % workload.kv_heads != 0) {
    yaml::fail(file, map.required("kv_heads"),
               "query_heads (" + std::to_string(workload.query_heads) + ") must be a multiple of kv_heads (" +
                   std::to_string(workload.kv_heads) + ")");
  }
  // hidden_size is an int: 65536 heads of 65536 would overflow it (undefined behaviour), so the product is bounded.
  const long long hidden_size = static_cast<long long>(workload.query_heads) * workload.head_dim;
  if (hidden_size > std::numeric_limits<int>::max()) {
    yaml::fail(file, map.required("head_dim"),
               "query_heads x head_dim (" + std::to_string(hidden_size) + ") is too large (at most " +
                   std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  workload.hidden_size = static_cast<int>(hidden_size);
  workload.parameters = map.number_or("parameters", 0.0, 1e15, 0.0);
  if (map.has("dtype")) {
    workload.dtype = map.string("dtype");
    if (workload.dtype != "bf16" && workload.dtype != "fp16") {
      yaml::fail(file, map.required("dtype"), "dtype must be bf16 or fp16, got '" + workload.dtype + "'");
    }
  }
  workload.batch = map.integer_or("batch", 1, 1000000, 1);
  read_model_rest(file, map, workload);
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
