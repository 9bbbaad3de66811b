// A model's weights by part, from its shape (workload.hpp): what each decode step streams from HBM. Pure.
//
// Per layer (Llama-style: no biases, gated MLP): Q and O are hidden x (query_heads x head_dim), K and V are
// hidden x (kv_heads x head_dim); a dense MLP is 3 x hidden x intermediate (gate, up, down); an MoE layer has
// `experts` such blocks of moe_intermediate_size, `shared_experts` more, and a hidden x experts router; two
// norms of hidden. Example: llama3.1-405b (hidden 16384, 128 / 8 heads x 128, intermediate 53248): Q = O =
// 268.4 M, K = V = 16.8 M, MLP 2617.2 M, norms 32,768: 3,187,703,808 per layer; x 126 layers + embedding and
// LM head 128,256 x 16,384 each = 405,853,388,800 parameters (Meta: "405B").
#pragma once

#include "treering/model/workload.hpp"

namespace treering::model {

// Latent attention (DeepSeek-V2/V3): the down-projections every TP rank holds whole (q_a: hidden x q_lora_rank and
// its norm; kv_a: hidden x (kv_lora_rank + qk_rope_head_dim) and its norm) are `replicated`; the per-head
// up-projections split with the query heads are `q` (q_b: q_lora_rank x heads x (nope + rope), or hidden x that
// without q_lora_rank) and `v` (kv_b: kv_lora_rank x heads x (nope + v_head_dim), W_UK and W_UV, absorbed per head
// at decode); `o` is heads x v_head_dim x hidden; k is 0. Example: deepseek-v3 (hidden 7168, 128 heads, q_lora 1536,
// kv_lora 512, rope 64, nope 128, v 128): replicated 11,010,048 + 1,536 + 4,128,768 + 512 = 15,140,864;
// q 37,748,736; v 16,777,216; o 117,440,512: 187,107,328 attention parameters a layer.
struct LayerWeights {  // parameters of one layer
  double q = 0, k = 0, v = 0, o = 0;
  double replicated = 0;           // latent attention's down-projections (every TP rank holds them whole)
  double mlp_dense = 0;            // a dense layer's MLP; 0 without intermediate_size or when every layer is MoE
  double experts_routed_each = 0;  // one routed expert
  double experts_shared = 0;       // all shared experts together
  double router = 0;
  double norms = 0;
};

LayerWeights layer_weights(const Workload& workload);

// The attention's parameters in a layer: q + k + v + o + replicated.
double attention_parameters(const LayerWeights& layer);

// The input embedding held apart from the LM head: vocab x hidden, 0 when they are tied or vocab is unknown.
double embedding_parameters(const Workload& workload);
// The LM head every step reads: vocab x hidden (tied or not).
double lm_head_parameters(const Workload& workload);
// Every parameter the shape gives (layers, embedding, LM head, final norm); 0 when it gives no MLP width.
double shape_parameters(const Workload& workload);

// The parameters one token runs through: attention and norms of every layer, the dense layers' MLPs, each MoE
// layer's router, shared experts and experts_per_token routed experts, the embedding and LM head (as DeepSeek counts
// "activated" parameters). Dense models: shape_parameters. Example: deepseek-v3: 37.5e9 (DeepSeek: "37B activated").
double active_parameters(const Workload& workload);

// The FLOPs of one decode step's GEMMs on one of `ranks` GPUs that split them (tensor parallelism): `tokens` through
// the active parameters but the embedding (a lookup, not a GEMM); a workload that gives only a parameter count: all
// of them. Example: llama3.1-8b (8.03e9 active, 128,256 x 4,096 = 0.525e9 embedding) at 32 tokens on one GPU:
// 2 x 32 x 7.505e9 = 0.480 TFLOP.
double step_gemm_flops(const Workload& workload, int tokens, int ranks);

// The model's weights in bytes, each part at its element type (fp8 feed-forward weights: 1 B); a workload that
// gives only a parameter count: parameters x weight_bytes. Example: llama3.1-405b-fp8: 126 x (570,425,344 x 2 B
// + 2,617,245,696 x 1 B + 32,768 x 2 B) + (2 x 2,101,346,304 + 16,384) x 2 B = 481,933,819,904 B. Block-scaled fp8
// weights (weight_block_size B) add a 4-byte scale per B x B tile of every fp8 matrix: 4 / 128^2 = 0.024 % at 128.
double model_weight_bytes(const Workload& workload);

// Fills what the shape implies: the parameter count when the workload gives none, and mean_weight_bytes
// (model_weight_bytes / parameters), which a head slice (layout.hpp) keeps. Presets and loaded files pass here.
void complete_weights(Workload& workload);

// Routed experts a batch of `tokens` touches on average, each token picking `per_token` of `experts`
// uniformly and independently: E x (1 - (1 - k/E)^tokens). Example: Mixtral (8 experts, 2 per token) at 4
// tokens: 8 x (1 - 0.75^4) = 5.47; at 1 token, exactly 2.
double expected_experts_touched(int experts, int per_token, int tokens);

}  // namespace treering::model
