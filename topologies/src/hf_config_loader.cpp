// load_hf_config_file (workload_spec.hpp): a Hugging Face config.json read strictly. The keys that change the
// shape are required or read; keys that describe an attention treering does not model refuse the file; the
// many keys that do not matter to a decode step's cost (rope scaling, token ids, eps) are left alone.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

namespace treering::topologies {
namespace {

using nlohmann::json;

// A config.json and where its keys are: errors name the line and column of the key they are about.
class ConfigText {
 public:
  ConfigText(std::string file, std::string text) : file_(std::move(file)), text_(std::move(text)) {}

  InputLocation at_offset(size_t offset) const {
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
  // The first `"key"` followed by a colon (the file's own key; config.json nests little).
  InputLocation at_key(const std::string& key) const {
    const std::string quoted = '"' + key + '"';
    for (size_t at = text_.find(quoted); at != std::string::npos; at = text_.find(quoted, at + 1)) {
      const size_t next = text_.find_first_not_of(" \t\r\n", at + quoted.size());
      if (next != std::string::npos && text_[next] == ':') return at_offset(at);
    }
    return {file_, 0, 0};
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(at_key(key), message);
  }
  const std::string& file() const { return file_; }
  const std::string& text() const { return text_; }

 private:
  std::string file_;
  std::string text_;
};

int positive_int(const ConfigText& config, const json& root, const std::string& key, bool required, int fallback = 0) {
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

void refuse_unmodelled_attention(const ConfigText& config, const json& root) {
  for (const char* key : {"kv_lora_rank", "q_lora_rank"}) {
    if (root.contains(key) && !root[key].is_null()) {
      config.fail(key, std::string("'") + key +
                           "': multi-head latent attention caches a compressed latent, not K and V per head; "
                           "treering models multi-head and grouped-query attention");
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
  w.weight_dtype = w.attention_weight_dtype = w.dtype;
}

// An FP8 checkpoint: fbgemm_fp8 (Meta's Llama 3.1 FP8) or fp8; the attention projections stay 16-bit when the
// quantization leaves self_attn modules out.
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

Workload read_config(const ConfigText& config, const json& root) {
  if (!root.is_object()) throw InputError(config.at_offset(0), "config.json must be a JSON object");
  const std::string type =
      root.contains("model_type") && root["model_type"].is_string() ? root["model_type"].get<std::string>() : "";
  if (type != "llama" && type != "mistral" && type != "mixtral" && type != "qwen2") {
    if (type.empty())
      throw InputError({config.file(), 0, 0}, "config.json has no model_type (llama, mistral, mixtral or qwen2)");
    config.fail("model_type", "model_type '" + type + "' is not read (llama, mistral, mixtral or qwen2)");
  }
  refuse_unmodelled_attention(config, root);
  Workload w;
  w.name = model_name(config.file(), root);
  w.source = config.file();
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
  if (root.contains("tie_word_embeddings")) {
    if (!root["tie_word_embeddings"].is_boolean())
      config.fail("tie_word_embeddings", "tie_word_embeddings must be true or false");
    w.tie_word_embeddings = root["tie_word_embeddings"].get<bool>();
  }
  if (type == "mixtral") {
    w.experts = positive_int(config, root, "num_local_experts", true);
    w.experts_per_token = positive_int(config, root, "num_experts_per_tok", true);
    if (w.experts_per_token > w.experts)
      config.fail("num_experts_per_tok", "num_experts_per_tok exceeds num_local_experts");
  }
  read_dtype(config, root, w);
  read_quantization(config, root, w);
  w.description = type + " from " + config.file();
  if (!root.contains("num_key_value_heads")) {
    w.description += "; no num_key_value_heads: one KV head per query head (MHA, Hugging Face's default)";
  }
  return w;
}

}  // namespace

Workload load_hf_config_file(const std::string& path) {
  const ConfigText config(path, read_input_file(path));
  json root;
  try {
    root = json::parse(config.text());
  } catch (const json::parse_error& error) {
    const size_t byte = error.byte > 0 ? error.byte - 1 : 0;
    std::string message = error.what();
    const size_t detail = message.find("parse error");
    throw InputError(config.at_offset(byte),
                     "JSON syntax: " + (detail == std::string::npos ? message : message.substr(detail)));
  }
  return read_config(config, root);
}

}  // namespace treering::topologies
