// load_hf_config_file (workload_spec.hpp): a Hugging Face config.json read strictly. The keys that change the
// shape are required or read; keys that describe an attention treering does not model refuse the file; the
// many keys that do not matter to a decode step's cost (rope scaling, token ids, eps) are left alone.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hf_config_text.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

namespace treering::topologies {
namespace hf {

InputLocation ConfigText::at_offset(size_t offset) const {
  InputLocation location{file_, 1, 1};
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++location.line;
      location.column = 1;
    } else {
      ++location.column;
    }
  }
  return location;
}

InputLocation ConfigText::at_key(const std::string& key) const {
  const std::string quoted = '"' + key + '"';
  for (size_t at = text_.find(quoted); at != std::string::npos; at = text_.find(quoted, at + 1)) {
    const size_t next = text_.find_first_not_of(" \t\r\n", at + quoted.size());
    if (next != std::string::npos && text_[next] == ':') return at_offset(at);
  }
  return {file_, 0, 0};
}

int positive_int(const ConfigText& config, const json& root, const std::string& key, bool required, int fallback) {
  if (!root.contains(key) || root[key].is_null()) {
    if (required)
      throw InputError({config.file(), 0, 0}, "config.json has no '" + key + "' (a model's shape needs it)");
    return fallback;
  }
  const json& value = root[key];
  if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > (1 << 24)) {
    config.fail(key, "'" + key + "' must be a whole number from 1 to 16777216, got " + value.dump());
  }
  return value.get<int>();
}

namespace {

// Sliding windows in use refuse any file; kv_lora_rank / q_lora_rank refuse a model_type that is not DeepSeek's (its
// latent attention is read by read_latent_model).
void refuse_unmodelled_attention(const ConfigText& config, const json& root, bool latent) {
  for (const char* key : {"kv_lora_rank", "q_lora_rank"}) {
    if (!latent && root.contains(key) && !root[key].is_null()) {
      config.fail(key, std::string("'") + key +
                           "': multi-head latent attention is read for model_type deepseek_v2, deepseek_v3 and "
                           "kimi_k2 only");
    }
  }
  bool sliding_in_use = true;  // Qwen2 lists a window and says whether it is used
  if (root.contains("use_sliding_window")) {
    if (!root["use_sliding_window"].is_boolean())
      config.fail("use_sliding_window", "use_sliding_window must be true or false");
    sliding_in_use = root["use_sliding_window"].get<bool>();
  }
  if (root.contains("sliding_window") && root["sliding_window"].is_number() && sliding_in_use) {
    config.fail("sliding_window",
                "sliding-window attention (sliding_window " + root["sliding_window"].dump() +
                    ") attends to the last tokens only; treering models attention over the whole context");
  }
}

// torch_dtype: the K/V and activation type. Absent: bf16, as serving engines load these models.
void read_dtype(const ConfigText& config, const json& root, Workload& w) {
  const std::string dtype = root.contains("torch_dtype") && root["torch_dtype"].is_string()
                                ? root["torch_dtype"].get<std::string>()
                                : "bfloat16";
  if (dtype == "bfloat16") {
    w.dtype = "bf16";
  } else if (dtype == "float16") {
    w.dtype = "fp16";
  } else {
    config.fail("torch_dtype", "torch_dtype '" + dtype + "': treering models 16-bit K/V (bfloat16 or float16)");
  }
  w.weight_dtype = w.attention_weight_dtype = w.kv_cache_dtype = w.dtype;
}

// weight_block_size [B, B]: a 4-byte scale per B x B tile (DeepSeek's fp8 releases: [128, 128]). Absent: per tensor.
int read_weight_block(const ConfigText& config, const json& q) {
  if (!q.contains("weight_block_size") || q["weight_block_size"].is_null()) return 0;
  const json& block = q["weight_block_size"];
  if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() || block[0] != block[1] ||
      block[0].get<long long>() < 1 || block[0].get<long long>() > 65536) {
    config.fail("weight_block_size",
                "weight_block_size must be a square tile [B, B] with B from 1 to 65536, got " + block.dump());
  }
  return block[0].get<int>();
}

// An FP8 checkpoint: fbgemm_fp8 (Meta's Llama 3.1 FP8) or fp8 (DeepSeek's block-scaled e4m3); the attention
// projections stay 16-bit when the quantization leaves self_attn modules out. Embedding and LM head stay at dtype.
void read_quantization(const ConfigText& config, const json& root, Workload& w) {
  if (!root.contains("quantization_config") || root["quantization_config"].is_null()) return;
  const json& q = root["quantization_config"];
  const std::string method = q.is_object() && q.contains("quant_method") && q["quant_method"].is_string()
                                 ? q["quant_method"].get<std::string>()
                                 : "";
  if (method != "fbgemm_fp8" && method != "fp8") {
    config.fail("quantization_config", "quant_method '" + method +
                                           "' is not read (fbgemm_fp8 or fp8); "
                                           "write a workload YAML with weight_dtype instead");
  }
  w.weight_dtype = "fp8";
  w.weight_bytes = 1;
  w.weight_block_size = read_weight_block(config, q);
  bool attention_kept = false;
  if (q.contains("modules_to_not_convert") && q["modules_to_not_convert"].is_array()) {
    for (const json& module : q["modules_to_not_convert"]) {
      if (module.is_string() && module.get<std::string>().find("self_attn") != std::string::npos) attention_kept = true;
    }
  }
  if (!attention_kept) {
    w.attention_weight_dtype = "fp8";
    w.attention_weight_bytes = 1;
  }
}

std::string model_name(const std::string& path, const json& root) {
  if (root.contains("_name_or_path") && root["_name_or_path"].is_string() &&
      !root["_name_or_path"].get<std::string>().empty()) {
    return std::filesystem::path(root["_name_or_path"].get<std::string>()).filename().string();
  }
  // A model's folder names it when the file is its config.json (~/models/Llama-3.1-8B/config.json); a file of
  // another name is named by itself (configs/qwen2-7b.json is "qwen2-7b", not "configs").
  const std::filesystem::path file(path);
  const std::string parent = file.parent_path().filename().string();
  return file.filename() != "config.json" || parent.empty() || parent == "." || parent == ".." ? file.stem().string()
                                                                                               : parent;
}

// Llama, Mistral, Mixtral, Qwen2: grouped-query attention, hidden_size = heads x head_dim, a dense or Mixtral MLP.
void read_grouped_model(const ConfigText& config, const json& root, const std::string& type, Workload& w) {
  w.layers = positive_int(config, root, "num_hidden_layers", true);
  w.query_heads = positive_int(config, root, "num_attention_heads", true);
  w.hidden_size = positive_int(config, root, "hidden_size", true);
  w.kv_heads = positive_int(config, root, "num_key_value_heads", false, w.query_heads);
  if (w.hidden_size % w.query_heads != 0)
    config.fail("hidden_size", "hidden_size is not a multiple of num_attention_heads");
  w.head_dim = positive_int(config, root, "head_dim", false, w.hidden_size / w.query_heads);
  if (static_cast<long long>(w.head_dim) * w.query_heads != w.hidden_size) {
    config.fail("head_dim", "head_dim x num_attention_heads (" +
                                std::to_string(static_cast<long long>(w.head_dim) * w.query_heads) +
                                ") differs from hidden_size (" + std::to_string(w.hidden_size) +
                                "); treering needs them equal");
  }
  if (w.query_heads % w.kv_heads != 0)
    config.fail("num_key_value_heads", "num_attention_heads must be a multiple of num_key_value_heads");
  w.intermediate_size = positive_int(config, root, "intermediate_size", true);
  w.vocab_size = positive_int(config, root, "vocab_size", true);
  w.max_position_embeddings = positive_int(config, root, "max_position_embeddings", false);
  if (type == "mixtral") {
    w.experts = positive_int(config, root, "num_local_experts", true);
    w.experts_per_token = positive_int(config, root, "num_experts_per_tok", true);
    if (w.experts_per_token > w.experts)
      config.fail("num_experts_per_tok", "num_experts_per_tok exceeds num_local_experts");
  }
  w.description = type + " from " + config.file();
  if (!root.contains("num_key_value_heads")) {
    w.description += "; no num_key_value_heads: one KV head per query head (MHA, Hugging Face's default)";
  }
}

bool is_latent_type(const std::string& type) {
  return type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2";
}

Workload read_config(const ConfigText& config, const json& root) {
  if (!root.is_object()) throw InputError(config.at_offset(0), "config.json must be a JSON object");
  const std::string type =
      root.contains("model_type") && root["model_type"].is_string() ? root["model_type"].get<std::string>() : "";
  const bool latent = is_latent_type(type);
  if (!latent && type != "llama" && type != "mistral" && type != "mixtral" && type != "qwen2") {
    const std::string known = "llama, mistral, mixtral, qwen2, deepseek_v2, deepseek_v3 or kimi_k2";
    if (type.empty()) throw InputError({config.file(), 0, 0}, "config.json has no model_type (" + known + ")");
    config.fail("model_type", "model_type '" + type + "' is not read (" + known + ")");
  }
  refuse_unmodelled_attention(config, root, latent);
  Workload w;
  w.name = model_name(config.file(), root);
  w.source = config.file();
  if (latent) {
    read_latent_model(config, root, w);
  } else {
    read_grouped_model(config, root, type, w);
  }
  read_types(config, root, w);
  return w;
}

}  // namespace

void read_types(const ConfigText& config, const json& root, Workload& w) {
  if (root.contains("tie_word_embeddings")) {
    if (!root["tie_word_embeddings"].is_boolean())
      config.fail("tie_word_embeddings", "tie_word_embeddings must be true or false");
    w.tie_word_embeddings = root["tie_word_embeddings"].get<bool>();
  }
  read_dtype(config, root, w);
  read_quantization(config, root, w);
}

}  // namespace hf

Workload load_hf_config_file(const std::string& path) {
  const hf::ConfigText config(path, read_input_file(path));
  hf::json root;
  try {
    root = hf::json::parse(config.text());
  } catch (const hf::json::parse_error& error) {
    const size_t byte = error.byte > 0 ? error.byte - 1 : 0;
    std::string message = error.what();
    const size_t detail = message.find("parse error");
    throw InputError(config.at_offset(byte),
                     "JSON syntax: " + (detail == std::string::npos ? message : message.substr(detail)));
  }
  return hf::read_config(config, root);
}

}  // namespace treering::topologies
