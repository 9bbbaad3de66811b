// Hugging Face config.json workloads: the shapes real checkpoints ship, and the files treering refuses.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

using namespace treering::topologies;
namespace fs = std::filesystem;

namespace {

// Writes `text` to <tmp>/treering-hf-<name>/config.json and returns the path.
std::string config_file(const std::string& name, const std::string& text) {
  const fs::path directory = fs::temp_directory_path() / ("treering-hf-" + name);
  fs::create_directories(directory);
  const fs::path file = directory / "config.json";
  std::ofstream(file) << text;
  return file.string();
}

// The keys of meta-llama/Llama-3.1-405B-Instruct-FP8's config.json that matter here (its rope_scaling and
// token ids left out), with the quantization that keeps self-attention in bf16.
const char* kLlama405Fp8 = R"({
  "architectures": ["LlamaForCausalLM"],
  "hidden_size": 16384,
  "intermediate_size": 53248,
  "model_type": "llama",
  "num_attention_heads": 128,
  "num_hidden_layers": 126,
  "num_key_value_heads": 8,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "modules_to_not_convert": ["model.layers.0.mlp.down_proj", "model.layers.0.self_attn.q_proj", "lm_head"],
    "quant_method": "fbgemm_fp8"
  },
  "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

std::string error_of(const std::string& path) {
  try {
    load_hf_config_file(path);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Llama 3.1 405B FP8's config.json: the shape, fp8 feed-forward weights, bf16 attention") {
  const Workload w = load_hf_config_file(config_file("llama405", kLlama405Fp8));
  CHECK(w.name == "treering-hf-llama405");  // the directory the config sits in
  // The same file under another name is named by itself, not by its folder.
  const fs::path renamed = fs::path(config_file("llama405", kLlama405Fp8)).parent_path() / "llama-405b-fp8.json";
  fs::copy_file(fs::path(renamed).replace_filename("config.json"), renamed, fs::copy_options::overwrite_existing);
  CHECK(load_hf_config_file(renamed.string()).name == "llama-405b-fp8");
  CHECK(w.layers == 126);
  CHECK(w.query_heads == 128);
  CHECK(w.kv_heads == 8);
  CHECK(w.head_dim == 128);  // 16384 / 128
  CHECK(w.hidden_size == 16384);
  CHECK(w.intermediate_size == 53248);
  CHECK(w.vocab_size == 128256);
  CHECK(w.dtype == "bf16");
  CHECK(w.weight_dtype == "fp8");
  CHECK(w.weight_bytes == 1);
  CHECK(w.attention_weight_bytes == 2);
  CHECK(w.experts == 0);
  CHECK(w.max_position_embeddings == 0);  // not in this excerpt: unknown
}

TEST_CASE("Mixtral's config.json: 8 experts, 2 per token") {
  const Workload w = load_hf_config_file(config_file("mixtral", R"({"model_type": "mixtral", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": null, "vocab_size": 32000,
    "torch_dtype": "bfloat16", "_name_or_path": "mistralai/Mixtral-8x7B-v0.1", "max_position_embeddings": 32768})"));
  CHECK(w.name == "Mixtral-8x7B-v0.1");
  CHECK(w.max_position_embeddings == 32768);
  CHECK(w.experts == 8);
  CHECK(w.experts_per_token == 2);
  CHECK(w.weight_bytes == 2);
  CHECK(w.kv_heads == 8);
}

TEST_CASE("config.json files treering cannot model are refused at the key, with the reason") {
  // Line 1 column 1 is '{'; each key below starts at column 3 of line 2.
  CHECK(error_of(config_file("mla", "{\n  \"kv_lora_rank\": 512, \"model_type\": \"llama\"}"))
            .find(":2:3: error: 'kv_lora_rank': multi-head latent attention is read for model_type deepseek_v2, "
                  "deepseek_v3 and kimi_k2 only") != std::string::npos);
  CHECK(error_of(config_file("type", "{\n  \"model_type\": \"gpt2\"}")) ==
        config_file("type", "{\n  \"model_type\": \"gpt2\"}") +
            ":2:3: error: model_type 'gpt2' is not read (llama, mistral, mixtral, qwen2, deepseek_v2, deepseek_v3 or "
            "kimi_k2)");
  const std::string sliding =
      config_file("sliding", R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
  "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000, "sliding_window": 4096})");
  CHECK(error_of(sliding).find(":2:76: error: sliding-window attention (sliding_window 4096)") != std::string::npos);
  const std::string no_layers = config_file("nolayers", R"({"model_type": "llama", "hidden_size": 64})");
  CHECK(error_of(no_layers) ==
        no_layers + ": error: config.json has no 'num_hidden_layers' (a model's shape needs it)");
  const std::string bad_heads =
      config_file("badheads",
                  "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                  " \"num_attention_heads\": \"8\"}");
  CHECK(error_of(bad_heads) ==
        bad_heads + ":2:2: error: 'num_attention_heads' must be a whole number from 1 to 16777216, got \"8\"");
  const std::string syntax = config_file("syntax", "{\n  \"model_type\": \"llama\",\n}");
  CHECK(error_of(syntax).rfind(syntax + ":3:1: error: JSON syntax: ", 0) == 0);
  const std::string quant = config_file("awq", R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 100, "quantization_config": {"quant_method": "awq"}})");
  CHECK(error_of(quant).find("quant_method 'awq' is not read (fbgemm_fp8 or fp8)") != std::string::npos);
  const std::string positions = config_file("positions", R"({"model_type": "llama", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 100,
    "max_position_embeddings": 4096.5})");
  CHECK(error_of(positions) == positions +
                                   ":3:5: error: 'max_position_embeddings' must be a whole number from 1 to 16777216, "
                                   "got 4096.5");
}

TEST_CASE("a config.json without num_key_value_heads is MHA, and its description says so") {
  const Workload mha = load_hf_config_file(config_file("mha", R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000})"));
  CHECK(mha.kv_heads == 32);
  CHECK(mha.description.find("no num_key_value_heads: one KV head per query head (MHA, Hugging Face's default)") !=
        std::string::npos);
  const Workload gqa = load_hf_config_file(config_file("gqa", R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256})"));
  CHECK(gqa.description.find("num_key_value_heads") == std::string::npos);
}
