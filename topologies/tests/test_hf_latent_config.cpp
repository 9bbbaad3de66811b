// Hugging Face config.json with multi-head latent attention: DeepSeek-V3's and DeepSeek-V2-Lite's files as their
// repositories ship them (topologies/examples/DeepSeek-V3/, DeepSeek-V2-Lite/), Kimi K2's model_type, and the DeepSeek
// files refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

using namespace treering::topologies;
namespace fs = std::filesystem;

namespace {

// topologies/examples/<repository>/config.json: the file as deepseek-ai/<repository> on Hugging Face ships it.
std::string fixture(const std::string& repository) {
  return std::string(TREERING_SOURCE_DIR) + "/topologies/examples/" + repository + "/config.json";
}

// DeepSeek-V2-Lite's shape keys from line 3 on; a test puts kv_lora_rank and the key it tries on line 2.
std::string lite_with(const std::string& line2) {
  return "{\n" + line2 +
         "\n\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": 27, \"num_attention_heads\": 16,\n"
         "\"hidden_size\": 2048, \"intermediate_size\": 10944, \"moe_intermediate_size\": 1408,\n"
         "\"n_routed_experts\": 64, \"num_experts_per_tok\": 6, \"n_shared_experts\": 2, \"first_k_dense_replace\": "
         "1,\n"
         "\"qk_rope_head_dim\": 64, \"qk_nope_head_dim\": 128, \"v_head_dim\": 128, \"q_lora_rank\": null,\n"
         "\"vocab_size\": 102400}";
}

// Writes `text` to <tmp>/treering-hf-latent-<name>/config.json and returns the path.
std::string config_file(const std::string& name, const std::string& text) {
  const fs::path directory = fs::temp_directory_path() / ("treering-hf-latent-" + name);
  fs::create_directories(directory);
  const std::string file = (directory / "config.json").string();
  std::ofstream(file) << text;
  return file;
}

// The error of `text` as a config.json, less the file's name ("no error" when it loads).
std::string error_of(const std::string& name, const std::string& text) {
  const std::string file = config_file(name, text);
  try {
    load_hf_config_file(file);
  } catch (const InputError& error) {
    const std::string what = error.what();
    return what.rfind(file, 0) == 0 ? what.substr(file.size()) : what;
  }
  return "no error";
}

}  // namespace

TEST_CASE("DeepSeek-V3's config.json: one latent head of 512 + 64, 256 experts in groups, block-scaled fp8") {
  const Workload w = load_hf_config_file(fixture("DeepSeek-V3"));
  CHECK(w.name == "DeepSeek-V3");  // its folder
  CHECK(w.layers == 61);           // num_nextn_predict_layers (the MTP module) left out ...
  CHECK(w.description.find("MTP module left out (num_nextn_predict_layers 1") != std::string::npos);  // ... and said
  CHECK(w.query_heads == 128);
  CHECK(w.kv_heads == 1);    // not num_key_value_heads (128): the cache is one latent
  CHECK(w.head_dim == 576);  // 512 + 64
  CHECK(w.hidden_size == 7168);
  CHECK(w.kv_lora_rank == 512);
  CHECK(w.q_lora_rank == 1536);
  CHECK(w.qk_rope_head_dim == 64);
  CHECK(w.qk_nope_head_dim == 128);
  CHECK(w.v_head_dim == 128);
  CHECK(w.intermediate_size == 18432);
  CHECK(w.moe_intermediate_size == 2048);
  CHECK(w.experts == 256);
  CHECK(w.experts_per_token == 8);
  CHECK(w.shared_experts == 1);
  CHECK(w.first_k_dense_replace == 3);
  CHECK(w.expert_groups == 8);
  CHECK(w.expert_groups_per_token == 4);
  CHECK(w.vocab_size == 129280);
  CHECK_FALSE(w.tie_word_embeddings);
  CHECK(w.dtype == "bf16");
  CHECK(w.kv_cache_dtype == "bf16");
  CHECK(w.weight_dtype == "fp8");
  CHECK(w.attention_weight_dtype == "fp8");
  CHECK(w.weight_block_size == 128);
}

TEST_CASE("DeepSeek-V2-Lite's config.json: q_lora_rank null, bf16, 64 experts") {
  const Workload w = load_hf_config_file(fixture("DeepSeek-V2-Lite"));
  CHECK(w.name == "DeepSeek-V2-Lite");
  CHECK(w.layers == 27);
  CHECK(w.query_heads == 16);
  CHECK(w.head_dim == 576);
  CHECK(w.hidden_size == 2048);
  CHECK(w.q_lora_rank == 0);
  CHECK(w.experts == 64);
  CHECK(w.experts_per_token == 6);
  CHECK(w.shared_experts == 2);
  CHECK(w.first_k_dense_replace == 1);
  CHECK(w.expert_groups == 1);
  CHECK(w.expert_groups_per_token == 1);
  CHECK(w.weight_dtype == "bf16");
  CHECK(w.weight_block_size == 0);
  CHECK(w.description.find("MTP") == std::string::npos);  // V2 has no MTP module
}

TEST_CASE("Kimi K2's model_type reads as DeepSeek-V3's") {
  std::ifstream in(fixture("DeepSeek-V3"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\"deepseek_v3\""), 13, "\"kimi_k2\"");  // Kimi K2: architectures DeepseekV3ForCausalLM
  const Workload w = load_hf_config_file(config_file("kimi", text));
  CHECK(w.description.rfind("kimi_k2 from ", 0) == 0);
  CHECK(w.head_dim == 576);
  CHECK(w.experts == 256);
}

TEST_CASE("DeepSeek config.json files treering cannot read are refused at the key") {
  CHECK(error_of("lite", lite_with("\"kv_lora_rank\": 512,")) == "no error");
  // Line 2 column 1 is each changed key's opening quote.
  CHECK(error_of("rank0", lite_with("\"kv_lora_rank\": 0,")) ==
        ":2:1: error: 'kv_lora_rank' must be a whole number from 1 to 16777216, got 0");
  CHECK(error_of("norank", lite_with("\"kv_lora_rank\": null,")) ==
        ": error: config.json has no 'kv_lora_rank' (a model's shape needs it)");
  CHECK(error_of("freq", lite_with("\"kv_lora_rank\": 512, \"moe_layer_freq\": 2,")) ==
        ":2:22: error: moe_layer_freq 2: treering models an MoE MLP in every layer after first_k_dense_replace "
        "(moe_layer_freq 1)");
  CHECK(error_of("groups", lite_with("\"kv_lora_rank\": 512, \"n_group\": 8, \"topk_group\": 9,")) ==
        ":2:36: error: topk_group must be from 1 to n_group (8)");
  CHECK(error_of("window", lite_with("\"kv_lora_rank\": 512, \"sliding_window\": 4096,")) ==
        ":2:22: error: sliding-window attention (sliding_window 4096) attends to the last tokens only; treering "
        "models attention over the whole context");
  CHECK(error_of("block", lite_with("\"kv_lora_rank\": 512, \"quantization_config\": {\"quant_method\": \"fp8\", "
                                    "\"weight_block_size\": [128, 64]},")) ==
        ":2:69: error: weight_block_size must be a square tile [B, B] with B from 1 to 65536, got [128,64]");
}
