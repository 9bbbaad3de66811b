// The pieces of load_hf_config_file (workload_spec.hpp) its model families share: a config.json with the places of
// its keys, and readers of the keys every family has. Private to topologies.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"

namespace treering::topologies::hf {

using nlohmann::json;

// A config.json and where its keys are: errors name the line and column of the key they are about.
class ConfigText {
 public:
  ConfigText(std::string file, std::string text) : file_(std::move(file)), text_(std::move(text)) {}

  InputLocation at_offset(size_t offset) const;
  // The first `"key"` followed by a colon (the file's own key; config.json nests little).
  InputLocation at_key(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(at_key(key), message);
  }
  const std::string& file() const { return file_; }
  const std::string& text() const { return text_; }

 private:
  std::string file_;
  std::string text_;
};

// A whole number from 1 to 2^24; absent or null: an error naming the key when `required`, else `fallback`.
int positive_int(const ConfigText& config, const json& root, const std::string& key, bool required, int fallback = 0);

// torch_dtype (bf16 when absent), tie_word_embeddings and an fp8 quantization_config: the element types.
void read_types(const ConfigText& config, const json& root, Workload& w);

// model_type deepseek_v2, deepseek_v3 or kimi_k2: multi-head latent attention and DeepSeek's MoE layers
// (hf_config_latent.cpp). Fills the attention, MLP and vocabulary; the caller reads the types.
void read_latent_model(const ConfigText& config, const json& root, Workload& w);

}  // namespace treering::topologies::hf
