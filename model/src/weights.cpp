// layer_weights and friends (weights.hpp).
#include "treering/model/weights.hpp"

#include <cmath>

namespace treering::model {

LayerWeights layer_weights(const Workload& w) {
  LayerWeights layer;
  const double hidden = w.hidden_size;
  layer.q = hidden * w.query_heads * w.head_dim;
  layer.k = layer.v = hidden * w.kv_heads * w.head_dim;
  layer.o = layer.q;
  if (w.experts > 0) {
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

double embedding_parameters(const Workload& w) {
  return w.tie_word_embeddings ? 0.0 : static_cast<double>(w.vocab_size) * w.hidden_size;
}

double lm_head_parameters(const Workload& w) { return static_cast<double>(w.vocab_size) * w.hidden_size; }

double shape_parameters(const Workload& w) {
  if (w.intermediate_size <= 0 && w.moe_intermediate_size <= 0) return 0.0;
  const LayerWeights l = layer_weights(w);
  const double per_layer =
      l.q + l.k + l.v + l.o + l.mlp_dense + w.experts * l.experts_routed_each + l.experts_shared + l.router + l.norms;
  return w.layers * per_layer + embedding_parameters(w) + lm_head_parameters(w) + w.hidden_size;
}

double model_weight_bytes(const Workload& w) {
  if (w.intermediate_size <= 0 && w.moe_intermediate_size <= 0) return w.parameters * w.weight_bytes;
  const LayerWeights l = layer_weights(w);
  const double mlp = l.mlp_dense + w.experts * l.experts_routed_each + l.experts_shared + l.router;
  const double per_layer =
      (l.q + l.k + l.v + l.o) * w.attention_weight_bytes + mlp * w.weight_bytes + l.norms * w.dtype_bytes;
  return w.layers * per_layer + (embedding_parameters(w) + lm_head_parameters(w) + w.hidden_size) * w.dtype_bytes;
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
