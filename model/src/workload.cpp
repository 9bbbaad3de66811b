#include "treering/model/workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace treering::model {
namespace {

Workload llama(std::string name, std::string description, int layers, int query_heads, int kv_heads, int head_dim,
               double parameters, std::string source) {
  Workload workload;
  workload.name = std::move(name);
  workload.description = std::move(description);
  workload.source = std::move(source);
  workload.layers = layers;
  workload.query_heads = query_heads;
  workload.kv_heads = kv_heads;
  workload.head_dim = head_dim;
  workload.hidden_size = query_heads * head_dim;
  workload.parameters = parameters;
  return workload;
}

std::vector<Workload> make_presets() {
  std::vector<Workload> presets;
  // Tree Attention (arXiv 2408.04093), section 5: "16 heads of dimension 128", batch 1, 16-bit, one layer.
  Workload paper = llama("paper-mha16", "the paper's microbenchmark: one MHA layer, 16 heads x 128", 1, 16, 16, 128, 0,
                         "arXiv 2408.04093 (Tree Attention), microbenchmark setup");
  presets.push_back(paper);
  // Figures from each model's config.json on its Hugging Face model card (num_hidden_layers,
  // num_attention_heads, num_key_value_heads, hidden_size / head_dim) and the parameter counts Meta publishes.
  presets.push_back(llama("llama3.1-8b", "Llama 3.1 8B: 32 layers, GQA 32 query / 8 KV heads x 128", 32, 32, 8, 128,
                          8.03e9, "meta-llama/Llama-3.1-8B config.json; Llama 3 herd paper (arXiv 2407.21783) table 3"));
  presets.push_back(llama("llama3.2-1b", "Llama 3.2 1B: 16 layers, GQA 32 query / 8 KV heads x 64", 16, 32, 8, 64,
                          1.24e9, "meta-llama/Llama-3.2-1B config.json (hidden 2048, 32 heads, 8 KV heads)"));
  presets.push_back(llama("llama3.1-70b", "Llama 3.1 70B: 80 layers, GQA 64 query / 8 KV heads x 128", 80, 64, 8, 128,
                          70.6e9, "meta-llama/Llama-3.1-70B config.json; Llama 3 herd paper (arXiv 2407.21783) table 3"));
  std::sort(presets.begin(), presets.end(), [](const Workload& a, const Workload& b) { return a.name < b.name; });
  for (const Workload& workload : presets) validate(workload);
  return presets;
}

}  // namespace

void validate(const Workload& workload) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("workload '" + workload.name + "': " + what);
  };
  if (workload.layers < 1) fail("layers must be at least 1");
  if (workload.query_heads < 1 || workload.kv_heads < 1) fail("query_heads and kv_heads must be at least 1");
  if (workload.head_dim < 1) fail("head_dim must be at least 1");
  if (workload.batch < 1) fail("batch must be at least 1");
  if (workload.query_heads % workload.kv_heads != 0) {
    fail("query_heads (" + std::to_string(workload.query_heads) + ") must be a multiple of kv_heads (" +
         std::to_string(workload.kv_heads) + ")");
  }
  if (workload.hidden_size != workload.query_heads * workload.head_dim) {
    fail("hidden_size (" + std::to_string(workload.hidden_size) + ") must equal query_heads x head_dim (" +
         std::to_string(workload.query_heads * workload.head_dim) + ")");
  }
  if (workload.parameters < 0) fail("parameters must not be negative");
  if (!((workload.dtype == "bf16" || workload.dtype == "fp16") && workload.dtype_bytes == 2)) {
    fail("dtype must be bf16 or fp16 (2 bytes)");
  }
}

double kv_cache_bytes_per_token(const Workload& workload) {
  return 2.0 * workload.kv_heads * workload.head_dim * workload.dtype_bytes * workload.layers;
}

const std::vector<Workload>& workload_presets() {
  static const std::vector<Workload> presets = make_presets();
  return presets;
}

const Workload& find_workload(std::string_view name) {
  for (const Workload& workload : workload_presets()) {
    if (workload.name == name) return workload;
  }
  std::string known;
  for (const Workload& workload : workload_presets()) known += (known.empty() ? "" : ", ") + workload.name;
  throw std::invalid_argument("unknown workload '" + std::string(name) + "' (presets: " + known + ")");
}

}  // namespace treering::model
