#include "treering/model/workload.hpp"

#include <algorithm>
#include <functional>
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

// The model's context length, max_position_embeddings in its config.json (engines size buffers by it).
Workload with_positions(Workload workload, int max_position_embeddings) {
  workload.max_position_embeddings = max_position_embeddings;
  return workload;
}

Workload with_fp8_mlp(Workload workload) {
  workload.weight_dtype = "fp8";
  workload.weight_bytes = 1;
  return workload;
}

struct LatentShape {  // a DeepSeek-style config.json's attention and MoE keys
  int hidden, layers, heads, q_lora_rank, intermediate, moe_intermediate, experts, per_token, shared, first_dense,
      groups, groups_per_token, vocab;
};

// DeepSeek-V2/V3 attention (kv_lora_rank 512, rope 64, nope 128, v 128 in all three presets) and MoE layers.
Workload deepseek(std::string name, std::string description, std::string source, const LatentShape& shape) {
  Workload w;
  w.name = std::move(name);
  w.description = std::move(description);
  w.source = std::move(source);
  w.layers = shape.layers;
  w.query_heads = shape.heads;
  w.kv_lora_rank = 512;
  w.qk_rope_head_dim = 64;
  w.qk_nope_head_dim = 128;
  w.v_head_dim = 128;
  w.q_lora_rank = shape.q_lora_rank;
  w.kv_heads = 1;
  w.head_dim = w.kv_lora_rank + w.qk_rope_head_dim;
  w.hidden_size = shape.hidden;
  w.intermediate_size = shape.intermediate;
  w.moe_intermediate_size = shape.moe_intermediate;
  w.experts = shape.experts;
  w.experts_per_token = shape.per_token;
  w.shared_experts = shape.shared;
  w.first_k_dense_replace = shape.first_dense;
  w.expert_groups = shape.groups;
  w.expert_groups_per_token = shape.groups_per_token;
  w.vocab_size = shape.vocab;
  return w;
}

// DeepSeek's FP8 releases: every linear layer of the blocks in e4m3 with a scale per 128 x 128 tile; embedding,
// LM head, norms and the router in bf16 (quantization_config: fmt e4m3, weight_block_size [128, 128]).
Workload with_block_fp8(Workload w) {
  w.weight_dtype = w.attention_weight_dtype = "fp8";
  w.weight_bytes = w.attention_weight_bytes = 1;
  w.weight_block_size = 128;
  return w;
}

// Multi-token-prediction modules (num_nextn_predict_layers) are left out: decode without speculation runs none.
void add_latent_presets(std::vector<Workload>& presets) {
  // deepseek-ai/DeepSeek-V3 config.json (R1 and V3.1 share it): hidden 7168, 61 layers, 128 heads, q_lora_rank 1536,
  // intermediate 18432, moe_intermediate 2048, 256 routed experts, 8 per token, 1 shared, first_k_dense_replace 3,
  // n_group 8, topk_group 4, vocab 129280. 671.0e9 parameters from that shape (DeepSeek-V3 technical report, arXiv
  // 2412.19437: "671B total parameters with 37B activated for each token", the MTP module's 14B apart).
  presets.push_back(with_block_fp8(
      deepseek("deepseek-v3", "DeepSeek-V3/R1: 61 layers, MLA 128 heads (latent 512 + 64), 256 experts, 8 per token",
               "deepseek-ai/DeepSeek-V3 config.json; arXiv 2412.19437 (DeepSeek-V3 technical report)",
               {7168, 61, 128, 1536, 18432, 2048, 256, 8, 1, 3, 8, 4, 129280})));
  // moonshotai/Kimi-K2-Instruct config.json (DeepseekV3ForCausalLM): 64 heads, 384 routed experts, one dense layer,
  // vocab 163840, no expert groups (n_group 1). Moonshot: "1 trillion total parameters, 32 billion activated".
  presets.push_back(
      with_block_fp8(deepseek("kimi-k2", "Kimi K2: 61 layers, MLA 64 heads (latent 512 + 64), 384 experts, 8 per token",
                              "moonshotai/Kimi-K2-Instruct config.json; Kimi K2 technical report (arXiv 2507.20534)",
                              {7168, 61, 64, 1536, 18432, 2048, 384, 8, 1, 1, 1, 1, 163840})));
  // deepseek-ai/DeepSeek-V2-Lite config.json: hidden 2048, 27 layers, 16 heads, no q_lora_rank, 64 routed experts of
  // 1408, 6 per token, 2 shared, first_k_dense_replace 1, vocab 102400, bf16. DeepSeek-V2 paper (arXiv 2405.04434):
  // "15.7B total parameters, 2.4B activated".
  presets.push_back(deepseek("deepseek-v2-lite",
                             "DeepSeek-V2-Lite: 27 layers, MLA 16 heads (latent 512 + 64), 64 experts, 6 per token",
                             "deepseek-ai/DeepSeek-V2-Lite config.json; arXiv 2405.04434 (DeepSeek-V2)",
                             {2048, 27, 16, 0, 10944, 1408, 64, 6, 2, 1, 1, 1, 102400}));
}

// Models that published serving-engine measurements ran (validate/data/engine-runs): each config.json's
// num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, intermediate_size and vocab_size on its
// Hugging Face model card, and the parameter count its publisher gives. Llama 3 8B and 70B have the shapes of 3.1
// (only the RoPE scaling and the context length differ, which a decode step's cost does not see). Each carries its
// config.json's max_position_embeddings: Llama 2 4,096, Llama 3 8,192, Mistral 7B v0.1 32,768, Qwen2 131,072.
void add_serving_presets(std::vector<Workload>& presets) {
  const char* llama2 = "; Llama 2 paper (arXiv 2307.09288)";
  presets.push_back(
      with_positions(with_mlp(llama("llama2-7b", "Llama 2 7B: 32 layers, MHA 32 heads x 128", 32, 32, 32, 128, 6.74e9,
                                    std::string("meta-llama/Llama-2-7b-hf config.json") + llama2),
                              11008, 32000),
                     4096));
  presets.push_back(
      with_positions(with_mlp(llama("llama2-13b", "Llama 2 13B: 40 layers, MHA 40 heads x 128", 40, 40, 40, 128,
                                    13.02e9, std::string("meta-llama/Llama-2-13b-hf config.json") + llama2),
                              13824, 32000),
                     4096));
  presets.push_back(
      with_positions(with_mlp(llama("llama2-70b", "Llama 2 70B: 80 layers, GQA 64 query / 8 KV heads x 128", 80, 64, 8,
                                    128, 68.98e9, std::string("meta-llama/Llama-2-70b-hf config.json") + llama2),
                              28672, 32000),
                     4096));
  presets.push_back(with_positions(with_mlp(llama("llama3-8b", "Llama 3 8B: 32 layers, GQA 32 query / 8 KV heads x 128",
                                                  32, 32, 8, 128, 8.03e9, "meta-llama/Meta-Llama-3-8B config.json"),
                                            14336, 128256),
                                   8192));
  presets.push_back(
      with_positions(with_mlp(llama("llama3-70b", "Llama 3 70B: 80 layers, GQA 64 query / 8 KV heads x 128", 80, 64, 8,
                                    128, 70.55e9, "meta-llama/Meta-Llama-3-70B config.json"),
                              28672, 128256),
                     8192));
  // Sliding-window attention over 4,096 tokens: the same as full attention up to that context.
  presets.push_back(
      with_positions(with_mlp(llama("mistral-7b", "Mistral 7B v0.1: 32 layers, GQA 32 query / 8 KV heads x 128", 32, 32,
                                    8, 128, 7.24e9, "mistralai/Mistral-7B-v0.1 config.json; arXiv 2310.06825"),
                              14336, 32000),
                     32768));
  presets.push_back(
      with_positions(with_mlp(llama("qwen2-7b", "Qwen2 7B: 28 layers, GQA 28 query / 4 KV heads x 128", 28, 28, 4, 128,
                                    7.62e9, "Qwen/Qwen2-7B config.json; Qwen2 report (arXiv 2407.10671)"),
                              18944, 152064),
                     131072));
  presets.push_back(
      with_positions(with_mlp(llama("qwen2-72b", "Qwen2 72B: 80 layers, GQA 64 query / 8 KV heads x 128", 80, 64, 8,
                                    128, 72.71e9, "Qwen/Qwen2-72B config.json; Qwen2 report (arXiv 2407.10671)"),
                              29568, 152064),
                     131072));
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
  mixtral.max_position_embeddings = 32768;  // config.json
  presets.push_back(mixtral);
  add_latent_presets(presets);
  add_serving_presets(presets);
  std::sort(presets.begin(), presets.end(), [](const Workload& a, const Workload& b) { return a.name < b.name; });
  for (Workload& workload : presets) {
    complete_weights(workload);
    validate(workload);
  }
  return presets;
}

using Fail = std::function<void(const std::string&)>;

// Latent attention: the four widths given, one KV head of the absorbed key width, a hidden size of its own.
void validate_latent_attention(const Workload& w, const Fail& fail) {
  if (w.qk_rope_head_dim < 1 || w.qk_nope_head_dim < 1 || w.v_head_dim < 1 || w.q_lora_rank < 0)
    fail("latent attention needs kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim and v_head_dim of at least 1");
  if (w.kv_heads != 1) fail("latent attention caches one latent head: kv_heads must be 1");
  if (w.head_dim != w.kv_lora_rank + w.qk_rope_head_dim) {
    fail("latent attention's head_dim (" + std::to_string(w.head_dim) + ") must be kv_lora_rank + qk_rope_head_dim (" +
         std::to_string(w.kv_lora_rank + w.qk_rope_head_dim) + "), the absorbed kernel's key width");
  }
  if (w.hidden_size < 1) fail("latent attention needs hidden_size");
}

void validate_moe_extras(const Workload& w, const Fail& fail) {
  if (w.first_k_dense_replace < 0 || w.first_k_dense_replace > w.layers)
    fail("first_k_dense_replace must be between 0 and layers (" + std::to_string(w.layers) + ")");
  if (w.first_k_dense_replace > 0 && w.intermediate_size <= 0)
    fail("first_k_dense_replace needs intermediate_size (the dense layers' MLP width)");
  if (w.expert_groups < 0 || w.expert_groups_per_token < 0 || w.weight_block_size < 0)
    fail("n_group, topk_group and weight_block_size must not be negative");
  if (w.expert_groups > 0) {
    if (w.experts == 0 || w.experts % w.expert_groups != 0)
      fail("n_group (" + std::to_string(w.expert_groups) + ") must divide the routed experts");
    if (w.expert_groups_per_token < 1 || w.expert_groups_per_token > w.expert_groups)
      fail("topk_group must be between 1 and n_group (" + std::to_string(w.expert_groups) + ")");
  }
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
  if (has_latent_attention(workload)) {
    validate_latent_attention(workload, fail);
  } else if (workload.hidden_size != workload.query_heads * workload.head_dim) {
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
  validate_moe_extras(workload, fail);
  if (!((workload.kv_cache_dtype == "bf16" || workload.kv_cache_dtype == "fp16") && workload.kv_cache_bytes == 2) &&
      !(workload.kv_cache_dtype == "fp8" && workload.kv_cache_bytes == 1)) {
    fail("kv_cache_dtype must be bf16 or fp16 (2 bytes) or fp8 (1 byte)");
  }
  if (workload.kv_cache_bytes != workload.dtype_bytes && !has_latent_attention(workload)) {
    fail("an fp8 KV cache is modelled for latent attention only (kv_cache_dtype " + workload.kv_cache_dtype + ")");
  }
}

bool has_latent_attention(const Workload& workload) { return workload.kv_lora_rank > 0; }

int attention_value_dim(const Workload& workload) {
  return has_latent_attention(workload) ? workload.kv_lora_rank : workload.head_dim;
}

int dense_mlp_layers(const Workload& workload) {
  return workload.experts > 0 ? std::min(workload.first_k_dense_replace, workload.layers) : workload.layers;
}

int moe_layers(const Workload& workload) { return workload.layers - dense_mlp_layers(workload); }

double cached_values_per_token(const Workload& workload) {
  return has_latent_attention(workload) ? workload.head_dim : 2.0 * workload.kv_heads * workload.head_dim;
}

double kv_cache_bytes_per_token(const Workload& workload) {
  return cached_values_per_token(workload) * workload.kv_cache_bytes * workload.layers;
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
