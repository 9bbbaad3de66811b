// Workload YAML with latent attention and the MoE extras: what loads, what defaults, what must agree.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "scratch_files.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

using namespace treering::topologies;

namespace {

// The attention lines of a small latent workload (DeepSeek-V2-Lite's widths), to which a test adds lines.
const std::string kLatent =
    "name: lite\nlayers: 2\nquery_heads: 16\nhidden_size: 2048\nkv_lora_rank: 512\nqk_rope_head_dim: 64\n"
    "qk_nope_head_dim: 128\nv_head_dim: 128\n";

Workload load_text(const std::string& text) {
  const std::filesystem::path file = testing::scratch_dir("workload-yaml") / "workload.yaml";
  testing::write(file, text);
  return load_workload_file(file.string());
}

}  // namespace

TEST_CASE("the DeepSeek-V3 example file: latent attention, dense-first MoE, block-scaled fp8") {
  const Workload w = load_workload_file(std::string(TREERING_SOURCE_DIR) + "/topologies/workloads/deepseek-v3.yaml");
  CHECK(w.layers == 61);
  CHECK(w.query_heads == 128);
  CHECK(w.kv_heads == 1);    // derived: one latent head
  CHECK(w.head_dim == 576);  // derived: 512 + 64
  CHECK(w.hidden_size == 7168);
  CHECK(w.kv_lora_rank == 512);
  CHECK(w.qk_rope_head_dim == 64);
  CHECK(w.qk_nope_head_dim == 128);
  CHECK(w.v_head_dim == 128);
  CHECK(w.q_lora_rank == 1536);
  CHECK(w.experts == 256);
  CHECK(w.experts_per_token == 8);
  CHECK(w.shared_experts == 1);
  CHECK(w.first_k_dense_replace == 3);
  CHECK(w.expert_groups == 8);
  CHECK(w.expert_groups_per_token == 4);
  CHECK(w.weight_block_size == 128);
  CHECK(w.weight_bytes == 1);
  CHECK(w.attention_weight_bytes == 1);
  CHECK(w.kv_cache_dtype == "bf16");
  CHECK(w.kv_cache_bytes == 2);
  CHECK(w.parameters == 0);  // the model counts them from the shape
}

TEST_CASE("latent attention: kv_heads and head_dim may be given if they agree; q_lora_rank defaults to 0") {
  const Workload w = load_text(kLatent + "kv_heads: 1\nhead_dim: 576\nkv_cache_dtype: fp8\n");
  CHECK(w.kv_heads == 1);
  CHECK(w.head_dim == 576);
  CHECK(w.q_lora_rank == 0);
  CHECK(w.kv_cache_dtype == "fp8");
  CHECK(w.kv_cache_bytes == 1);
  CHECK_THROWS_WITH_AS(load_text(kLatent + "head_dim: 192\n"), doctest::Contains(":9:11: error: head_dim must be"),
                       InputError);
}

TEST_CASE("without latent attention hidden_size may be given when it is query_heads x head_dim") {
  const std::string gqa = "name: g\nlayers: 2\nquery_heads: 8\nkv_heads: 2\nhead_dim: 64\ndtype: fp16\n";
  const Workload w = load_text(gqa + "hidden_size: 512\n");  // 8 x 64
  CHECK(w.hidden_size == 512);
  CHECK(w.max_position_embeddings == 0);  // not given: unknown
  CHECK(load_text(gqa + "max_position_embeddings: 4096\n").max_position_embeddings == 4096);
  CHECK_THROWS_AS(load_text(gqa + "max_position_embeddings: 0\n"), InputError);
  CHECK(w.kv_cache_dtype == "fp16");  // the default: dtype
  CHECK(w.kv_cache_bytes == 2);
  CHECK_THROWS_WITH_AS(load_text(gqa + "hidden_size: 513\n"), doctest::Contains(":7:14: error: hidden_size must be"),
                       InputError);
  CHECK_THROWS_WITH_AS(load_text(gqa + "kv_cache_dtype: int8\n"),
                       doctest::Contains(":7:17: error: kv_cache_dtype must be bf16, fp16 or fp8, got 'int8'"),
                       InputError);
  CHECK_THROWS_WITH_AS(load_text(gqa + "weight_block_size: 128\n"),
                       doctest::Contains(":7:20: error: weight_block_size scales fp8 weights"), InputError);
  CHECK_THROWS_WITH_AS(load_text(gqa + "intermediate_size: 256\nexperts: 4\nexperts_per_token: 1\ntopk_group: 1\n"),
                       doctest::Contains(":10:13: error: topk_group needs n_group"), InputError);
}
