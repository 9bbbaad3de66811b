// Latent-attention workload files against the presets: DeepSeek-V3's and DeepSeek-V2-Lite's config.json as their
// repositories ship them (topologies/examples/DeepSeek-V3/, DeepSeek-V2-Lite/) and the example YAML
// (topologies/workloads/deepseek-v3.yaml) load, once the model completes them (complete_weights), into the presets'
// shapes.
#include <doctest/doctest.h>

#include <string>

#include "treering/model/weights.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/workload_spec.hpp"

using namespace treering;

namespace {

model::Workload completed(model::Workload w) {
  model::complete_weights(w);
  model::validate(w);
  return w;
}

// Every field of the shape (name, description and source apart).
void check_same_shape(const model::Workload& a, const model::Workload& b) {
  CHECK(a.layers == b.layers);
  CHECK(a.query_heads == b.query_heads);
  CHECK(a.kv_heads == b.kv_heads);
  CHECK(a.head_dim == b.head_dim);
  CHECK(a.hidden_size == b.hidden_size);
  CHECK(a.parameters == b.parameters);
  CHECK(a.dtype == b.dtype);
  CHECK(a.dtype_bytes == b.dtype_bytes);
  CHECK(a.batch == b.batch);
  CHECK(a.intermediate_size == b.intermediate_size);
  CHECK(a.vocab_size == b.vocab_size);
  CHECK(a.tie_word_embeddings == b.tie_word_embeddings);
  CHECK(a.weight_dtype == b.weight_dtype);
  CHECK(a.weight_bytes == b.weight_bytes);
  CHECK(a.attention_weight_dtype == b.attention_weight_dtype);
  CHECK(a.attention_weight_bytes == b.attention_weight_bytes);
  CHECK(a.mean_weight_bytes == b.mean_weight_bytes);
  CHECK(a.experts == b.experts);
  CHECK(a.experts_per_token == b.experts_per_token);
  CHECK(a.shared_experts == b.shared_experts);
  CHECK(a.moe_intermediate_size == b.moe_intermediate_size);
  CHECK(a.first_k_dense_replace == b.first_k_dense_replace);
  CHECK(a.expert_groups == b.expert_groups);
  CHECK(a.expert_groups_per_token == b.expert_groups_per_token);
  CHECK(a.weight_block_size == b.weight_block_size);
  CHECK(a.kv_lora_rank == b.kv_lora_rank);
  CHECK(a.qk_rope_head_dim == b.qk_rope_head_dim);
  CHECK(a.qk_nope_head_dim == b.qk_nope_head_dim);
  CHECK(a.v_head_dim == b.v_head_dim);
  CHECK(a.q_lora_rank == b.q_lora_rank);
  CHECK(a.kv_cache_dtype == b.kv_cache_dtype);
  CHECK(a.kv_cache_bytes == b.kv_cache_bytes);
}

std::string source_file(const std::string& relative) { return std::string(TREERING_SOURCE_DIR) + "/" + relative; }

}  // namespace

TEST_CASE("DeepSeek-V3's config.json is the deepseek-v3 preset: 671,026,404,352 parameters") {
  const model::Workload w =
      completed(topologies::load_hf_config_file(source_file("topologies/examples/DeepSeek-V3/config.json")));
  CHECK(w.name == "DeepSeek-V3");  // its folder
  check_same_shape(w, model::find_workload("deepseek-v3"));
  // counted by hand in test_latent_workloads.cpp: 61 x (187,107,328 + 14,336) + 3 x 396,361,728
  //   + 58 x (257 x 44,040,192 + 1,835,008) + 2 x 129,280 x 7168 + 7168
  CHECK(w.parameters == 671026404352.0);
}

TEST_CASE("DeepSeek-V2-Lite's config.json is the deepseek-v2-lite preset") {
  const model::Workload w =
      completed(topologies::load_hf_config_file(source_file("topologies/examples/DeepSeek-V2-Lite/config.json")));
  check_same_shape(w, model::find_workload("deepseek-v2-lite"));
  CHECK(w.parameters == 15706484224.0);  // test_latent_workloads.cpp
}

TEST_CASE("the example deepseek-v3.yaml is the deepseek-v3 preset") {
  const model::Workload w =
      completed(topologies::load_workload_file(source_file("topologies/workloads/deepseek-v3.yaml")));
  check_same_shape(w, model::find_workload("deepseek-v3"));
}
