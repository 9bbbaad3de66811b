// layer_weights and friends (weights.hpp).
#include "treering/model/weights.hpp"

#include <cmath>

namespace treering::model {

namespace {

void latent_attention_weights(const Workload& w, LayerWeights& layer) {
  const double hidden = w.hidden_size;
  const double heads = w.query_heads;
  const double query_width = heads * (w.qk_nope_head_dim + w.qk_rope_head_dim);
  const double latent = w.kv_lora_rank + w.qk_rope_head_dim;
  layer.replicated = hidden * latent + w.kv_lora_rank;  // kv_a and its norm
  if (w.q_lora_rank > 0) {
    layer.replicated += hidden * w.q_lora_rank + w.q_lora_rank;  // q_a and its norm
    layer.q = w.q_lora_rank * query_width;
  } else {
    layer.q = hidden * query_width;
  }
  layer.v = w.kv_lora_rank * heads * (w.qk_nope_head_dim + w.v_head_dim);
  layer.o = heads * w.v_head_dim * hidden;
}

}  // namespace

LayerWeights layer_weights(const Workload& w) {
  LayerWeights layer;
  const double hidden = w.hidden_size;
  if (has_latent_attention(w)) {
    latent_attention_weights(w, layer);
  } else {
    layer.q = hidden * w.query_heads * w.head_dim;
    layer.k = layer.v = hidden * w.kv_heads * w.head_dim;
    layer.o = layer.q;
  }
  if (w.experts > 0) {
    if (w.first_k_dense_replace > 0) layer.mlp_dense = 3 * hidden * w.intermediate_size;
    const double width = w.moe_intermediate_size > 0 ? w.moe_intermediate_size : w.intermediate_size;
    layer.experts_routed_each = 3 * hidden * width;
    layer.experts_shared = w.shared_experts * layer.experts_routed_each;
    layer.router = hidden * w.experts;
  } else {
    layer.mlp_dense = 3 * hidden * w.intermediate_size;
  }
  layer.norms = 2 * hidden;
  return layer;
}

double attention_parameters(const LayerWeights& l) { return l.q + l.k + l.v + l.o + l.replicated; }

double embedding_parameters(const Workload& w) {
  return w.tie_word_embeddings ? 0.0 : static_cast<double>(w.vocab_size) * w.hidden_size;
}

double lm_head_parameters(const Workload& w) { return static_cast<double>(w.vocab_size) * w.hidden_size; }

namespace {

// Every layer's MLP parameters: the dense layers' MLPs and the MoE layers' experts (routed ones `routed_each` times
// `routed`), shared experts and routers.
double mlp_parameters(const Workload& w, const LayerWeights& l, double routed) {
  return dense_mlp_layers(w) * l.mlp_dense +
         moe_layers(w) * (routed * l.experts_routed_each + l.experts_shared + l.router);
}

bool without_shape(const Workload& w) { return w.intermediate_size <= 0 && w.moe_intermediate_size <= 0; }

// Bytes per byte of an fp8 weight with its block scales: 1 + 4 / block^2.
double scaled_fp8(const Workload& w, double bytes) {
  if (bytes != 1 || w.weight_block_size <= 0) return bytes;
  return bytes + 4.0 / (static_cast<double>(w.weight_block_size) * w.weight_block_size);
}

}  // namespace

double shape_parameters(const Workload& w) {
  if (without_shape(w)) return 0.0;
  const LayerWeights l = layer_weights(w);
  return w.layers * (attention_parameters(l) + l.norms) + mlp_parameters(w, l, w.experts) + embedding_parameters(w) +
         lm_head_parameters(w) + w.hidden_size;
}

double active_parameters(const Workload& w) {
  if (without_shape(w) || w.experts == 0) return shape_parameters(w);
  const LayerWeights l = layer_weights(w);
  return w.layers * (attention_parameters(l) + l.norms) + mlp_parameters(w, l, w.experts_per_token) +
         embedding_parameters(w) + lm_head_parameters(w) + w.hidden_size;
}

double step_gemm_flops(const Workload& w, int tokens, int ranks) {
  const double parameters = without_shape(w) ? w.parameters : active_parameters(w) - embedding_parameters(w);
  return 2.0 * tokens * parameters / ranks;
}

double model_weight_bytes(const Workload& w) {
  if (without_shape(w)) return w.parameters * w.weight_bytes;
  const LayerWeights l = layer_weights(w);
  const double per_layer = attention_parameters(l) * scaled_fp8(w, w.attention_weight_bytes) + l.norms * w.dtype_bytes;
  return w.layers * per_layer + mlp_parameters(w, l, w.experts) * scaled_fp8(w, w.weight_bytes) +
         (embedding_parameters(w) + lm_head_parameters(w) + w.hidden_size) * w.dtype_bytes;
}

void complete_weights(Workload& w) {
  if (w.parameters <= 0) w.parameters = shape_parameters(w);
  const double shape = shape_parameters(w);
  w.mean_weight_bytes = shape > 0 ? model_weight_bytes(w) / shape : w.weight_bytes;
}

double expected_experts_touched(int experts, int per_token, int tokens) {
  if (experts <= 0 || per_token <= 0 || tokens <= 0) return 0.0;
  const double miss = 1.0 - static_cast<double>(per_token) / experts;
  return experts * (1.0 - std::pow(miss, tokens));
}

}  // namespace treering::model
