#include "treering/model/workload.hpp"

#include <algorithm>
#include <stdexcept>

#include "treering/model/weights.hpp"
#include "treering/topologies/input_error.hpp"

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

// The rest of a Llama-style model (weights.hpp): its MLP width and vocabulary, from config.json.
Workload with_mlp(Workload workload, int intermediate_size, int vocab_size, bool tied = false) {
  workload.intermediate_size = intermediate_size;
  workload.vocab_size = vocab_size;
  workload.tie_word_embeddings = tied;
  return workload;
}

Workload with_fp8_mlp(Workload workload) {
  workload.weight_dtype = "fp8";
  workload.weight_bytes = 1;
  return workload;
}

std::vector<Workload> make_presets() {
  std::vector<Workload> presets;
  // Tree Attention (arXiv 2408.04093), section 5: "16 heads of dimension 128", batch 1, 16-bit, one layer.
  Workload paper = llama("paper-mha16", "the paper's microbenchmark: one MHA layer, 16 heads x 128", 1, 16, 16, 128, 0,
                         "arXiv 2408.04093 (Tree Attention), microbenchmark setup");
  presets.push_back(paper);
  // Figures from each model's config.json on its Hugging Face model card (num_hidden_layers,
  // num_attention_heads, num_key_value_heads, hidden_size / head_dim, intermediate_size, vocab_size,
  // tie_word_embeddings) and the parameter counts Meta publishes.
  presets.push_back(
      with_mlp(llama("llama3.1-8b", "Llama 3.1 8B: 32 layers, GQA 32 query / 8 KV heads x 128", 32, 32, 8, 128, 8.03e9,
                     "meta-llama/Llama-3.1-8B config.json; Llama 3 herd paper (arXiv 2407.21783) table 3"),
               14336, 128256));
  presets.push_back(
      with_mlp(llama("llama3.2-1b", "Llama 3.2 1B: 16 layers, GQA 32 query / 8 KV heads x 64", 16, 32, 8, 64, 1.24e9,
                     "meta-llama/Llama-3.2-1B config.json (hidden 2048, 32 heads, 8 KV heads)"),
               8192, 128256, true));
  presets.push_back(
      with_mlp(llama("llama3.1-70b", "Llama 3.1 70B: 80 layers, GQA 64 query / 8 KV heads x 128", 80, 64, 8, 128,
                     70.6e9, "meta-llama/Llama-3.1-70B config.json; Llama 3 herd paper (arXiv 2407.21783) table 3"),
               28672, 128256));
  // 405B: hidden 16384, 126 layers, 128 / 8 heads, intermediate 53248, vocab 128256; 405,853,388,800 parameters
  // counted from that shape (weights.hpp). The FP8 release (meta-llama/Llama-3.1-405B-Instruct-FP8, FBGEMM
  // row-wise) quantizes the feed-forward layers only: "we do not perform quantization in the self-attention
  // layers" (arXiv 2407.21783, section 6.2), nor the first and last layers' (2 of 126: this preset counts all 126
  // MLPs at 1 byte, 1.6 % fewer MLP bytes than the release streams).
  const Workload llama405 =
      with_mlp(llama("llama3.1-405b", "Llama 3.1 405B: 126 layers, GQA 128 query / 8 KV heads x 128", 126, 128, 8, 128,
                     405.853e9, "meta-llama/Llama-3.1-405B config.json; Llama 3 herd paper (arXiv 2407.21783) table 3"),
               53248, 128256);
  presets.push_back(llama405);
  Workload llama405_fp8 = with_fp8_mlp(llama405);
  llama405_fp8.name = "llama3.1-405b-fp8";
  llama405_fp8.description = "Llama 3.1 405B, FP8 feed-forward weights (attention, embeddings and KV cache in bf16)";
  llama405_fp8.source = "meta-llama/Llama-3.1-405B-Instruct-FP8 config.json; arXiv 2407.21783 section 6.2";
  presets.push_back(llama405_fp8);
  // Mixtral 8x7B: hidden 4096, 32 layers, 32 / 8 heads x 128, 8 experts of width 14336, 2 per token, vocab
  // 32000: 46.70e9 parameters from the shape (Mistral AI: "46.7B total parameters", arXiv 2401.04088).
  Workload mixtral =
      with_mlp(llama("mixtral-8x7b", "Mixtral 8x7B: 32 layers, GQA 32 query / 8 KV heads x 128, 8 experts, 2 per token",
                     32, 32, 8, 128, 46.70e9, "mistralai/Mixtral-8x7B-v0.1 config.json; arXiv 2401.04088"),
               14336, 32000);
  mixtral.experts = 8;
  mixtral.experts_per_token = 2;
  presets.push_back(mixtral);
  std::sort(presets.begin(), presets.end(), [](const Workload& a, const Workload& b) { return a.name < b.name; });
  for (Workload& workload : presets) {
    complete_weights(workload);
    validate(workload);
  }
  return presets;
}

bool known_weight_dtype(const std::string& dtype, double bytes) {
  return ((dtype == "bf16" || dtype == "fp16") && bytes == 2) || (dtype == "fp8" && bytes == 1);
}

}  // namespace

void validate(const Workload& workload) {
  auto fail = [&](const std::string& what) {
    throw topologies::InputError("workload '" + workload.name + "': " + what);
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
  if (!known_weight_dtype(workload.weight_dtype, workload.weight_bytes) ||
      !known_weight_dtype(workload.attention_weight_dtype, workload.attention_weight_bytes)) {
    fail("weight dtypes must be bf16 or fp16 (2 bytes) or fp8 (1 byte)");
  }
  if (workload.intermediate_size < 0 || workload.vocab_size < 0 || workload.moe_intermediate_size < 0) {
    fail("intermediate_size, vocab_size and moe_intermediate_size must not be negative");
  }
  if (workload.experts < 0 || workload.shared_experts < 0) fail("experts and shared_experts must not be negative");
  if (workload.experts > 0 && (workload.experts_per_token < 1 || workload.experts_per_token > workload.experts)) {
    fail("experts_per_token must be between 1 and experts (" + std::to_string(workload.experts) + ")");
  }
  if (workload.experts > 0 && workload.intermediate_size <= 0 && workload.moe_intermediate_size <= 0) {
    fail("an MoE workload needs intermediate_size or moe_intermediate_size (an expert's width)");
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
  throw topologies::InputError("unknown workload '" + std::string(name) + "' (presets: " + known + ")");
}

}  // namespace treering::model
