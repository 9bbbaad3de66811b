// read_latent_model (hf_config_text.hpp): DeepSeek-V2/V3's config.json (model_type deepseek_v2, deepseek_v3) and
// Kimi K2's (model_type kimi_k2, architectures DeepseekV3ForCausalLM), in the key names of
// deepseek-ai/DeepSeek-V3's and deepseek-ai/DeepSeek-V2-Lite's config.json on Hugging Face.
//
// Read: the latent attention (kv_lora_rank, q_lora_rank (null: 0), qk_rope_head_dim, qk_nope_head_dim, v_head_dim),
// the MoE layers (n_routed_experts, num_experts_per_tok, n_shared_experts, moe_intermediate_size,
// first_k_dense_replace, n_group, topk_group) and num_nextn_predict_layers (the multi-token-prediction module, left
// out of the workload and said so in its description: decode without speculation runs none). moe_layer_freq must be
// 1 (every layer past the dense ones is MoE). num_key_value_heads is not read: the cache is one latent (kv_heads 1,
// head_dim kv_lora_rank + qk_rope_head_dim, the absorbed kernel's key width).
//
// Accepted and left alone, as they do not change a decode step's bytes or FLOPs at the shapes treering models:
// rope_scaling (YaRN stretches the rotary frequencies; the rotary part stays qk_rope_head_dim wide), rope_theta,
// topk_method, scoring_func, routed_scaling_factor, norm_topk_prob (which experts a token picks and how their outputs
// are weighed, not how many), aux_loss_alpha and seq_aux (training losses), ep_size (a training layout),
// attention_bias and attention_dropout, token ids, max_position_embeddings, rms_norm_eps, hidden_act.
#include <string>

#include "hf_config_text.hpp"

namespace treering::topologies::hf {
namespace {

// A whole number that may be 0 (absent or null: `fallback`).
int count(const ConfigText& config, const json& root, const std::string& key, int fallback) {
  if (!root.contains(key) || root[key].is_null()) return fallback;
  const json& value = root[key];
  if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > (1 << 24)) {
    config.fail(key, "'" + key + "' must be a whole number from 0 to 16777216, got " + value.dump());
  }
  return value.get<int>();
}

void read_latent_attention(const ConfigText& config, const json& root, Workload& w) {
  w.layers = positive_int(config, root, "num_hidden_layers", true);
  w.query_heads = positive_int(config, root, "num_attention_heads", true);
  w.hidden_size = positive_int(config, root, "hidden_size", true);
  w.kv_lora_rank = positive_int(config, root, "kv_lora_rank", true);
  w.qk_rope_head_dim = positive_int(config, root, "qk_rope_head_dim", true);
  w.qk_nope_head_dim = positive_int(config, root, "qk_nope_head_dim", true);
  w.v_head_dim = positive_int(config, root, "v_head_dim", true);
  w.q_lora_rank = count(config, root, "q_lora_rank", 0);  // null: queries projected from the hidden state
  w.kv_heads = 1;
  w.head_dim = w.kv_lora_rank + w.qk_rope_head_dim;
}

// n_group experts' groups, of which topk_group per token (DeepSeek-V3: 8 and 4; 1 and 1: no groups to speak of).
void read_expert_groups(const ConfigText& config, const json& root, Workload& w) {
  w.expert_groups = count(config, root, "n_group", 0);
  w.expert_groups_per_token = count(config, root, "topk_group", 0);
  if (w.expert_groups == 0) {
    if (w.expert_groups_per_token > 0) config.fail("topk_group", "topk_group needs n_group (the expert groups)");
    return;
  }
  if (w.experts % w.expert_groups != 0) {
    config.fail("n_group", "n_group (" + std::to_string(w.expert_groups) + ") must divide n_routed_experts (" +
                               std::to_string(w.experts) + ")");
  }
  if (w.expert_groups_per_token < 1 || w.expert_groups_per_token > w.expert_groups)
    config.fail("topk_group", "topk_group must be from 1 to n_group (" + std::to_string(w.expert_groups) + ")");
}

// The MLPs: dense layers of intermediate_size first, then MoE layers (none without n_routed_experts).
void read_moe(const ConfigText& config, const json& root, Workload& w) {
  w.intermediate_size = positive_int(config, root, "intermediate_size", true);
  w.experts = count(config, root, "n_routed_experts", 0);
  if (w.experts == 0) return;  // a dense model
  w.experts_per_token = positive_int(config, root, "num_experts_per_tok", true);
  if (w.experts_per_token > w.experts)
    config.fail("num_experts_per_tok", "num_experts_per_tok exceeds n_routed_experts");
  w.shared_experts = count(config, root, "n_shared_experts", 0);
  w.moe_intermediate_size = positive_int(config, root, "moe_intermediate_size", true);
  w.first_k_dense_replace = count(config, root, "first_k_dense_replace", 0);
  if (w.first_k_dense_replace > w.layers) {
    config.fail("first_k_dense_replace",
                "first_k_dense_replace exceeds num_hidden_layers (" + std::to_string(w.layers) + ")");
  }
  if (count(config, root, "moe_layer_freq", 1) != 1) {
    config.fail("moe_layer_freq", "moe_layer_freq " + root["moe_layer_freq"].dump() +
                                      ": treering models an MoE MLP in every layer after first_k_dense_replace "
                                      "(moe_layer_freq 1)");
  }
  read_expert_groups(config, root, w);
}

}  // namespace

void read_latent_model(const ConfigText& config, const json& root, Workload& w) {
  const std::string type = root["model_type"].get<std::string>();
  read_latent_attention(config, root, w);
  read_moe(config, root, w);
  w.vocab_size = positive_int(config, root, "vocab_size", true);
  w.description = type + " from " + config.file() + ": multi-head latent attention (" + std::to_string(w.kv_lora_rank) +
                  " + " + std::to_string(w.qk_rope_head_dim) + " per token)";
  const int mtp_layers = count(config, root, "num_nextn_predict_layers", 0);
  if (mtp_layers > 0) {
    w.description += "; MTP module left out (num_nextn_predict_layers " + std::to_string(mtp_layers) +
                     ": decode without speculation runs none)";
  }
}

}  // namespace treering::topologies::hf
