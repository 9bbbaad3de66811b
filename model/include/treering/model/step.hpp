// The whole decode step of a layout (layout_model.hpp): for every layer, the attention combine, the QKV and
// output projections, the MLP (dense, or the experts a batch routes to), the norms and the KV append, with
// the weights streamed from HBM, and the tensor-parallel all-reduces between them; then the LM head. Time
// per output token, tokens per second, memory per GPU and the longest context that fits. Pure.
//
// Latent attention (workload.hpp): the down-projections (q_a, kv_a) on every GPU, the per-head up-projections (q_b and
// kv_b's W_UK, W_UV, absorbed) split with the heads, the output projection as any. Data-parallel attention (layout.hpp)
// runs the attention's weights whole on each GPU's own sequences and the MLP on the whole batch; decode context
// parallelism splits the projections over all tp x cp GPUs. MoE models with dense first layers (first_k_dense_replace)
// run those layers' dense MLP instead of the experts.
//
// Where the layers run: QKV on the TP group's heads (tp ways; KV weights replicated where KV heads are);
// the output projection and the MLP over the TP group (tp ways, each CP rank a replica) where the combine
// leaves the output on every CP rank or split by sequence (pass-q: each rank then runs its own sequences),
// and over all tp x cp GPUs where it leaves the output split by head (a2a, ag-rs: Helix and vLLM's decode
// context parallel then use every GPU as the TP group); two all-reduces of the hidden state per layer over
// that group. Decode is memory-bound: a part takes launch + max(weight bytes / HBM rate, FLOPs / peak), its
// FLOPs 2 x tokens x parameters; a cluster whose calibration has a `step` section (a real step measured it) costs
// the parts it names as fixed + bytes / (rated HBM x efficiency) instead, the attention's kernel included. Example:
// llama3.1-405b-fp8 at tp 8 (H100, 2.68 TB/s effective): a layer's 3.25 G parameters at 1 B over 8 GPUs = 406 MB -> 152
// us; 126 layers: 19.1 ms of weights per token.
#pragma once

#include <string>

#include <optional>

#include "treering/model/layout_model.hpp"
#include "treering/model/moe_exchange.hpp"
#include "treering/model/paged_attention.hpp"

namespace treering::model {

enum class Scope { attention, layer, step };
const char* to_string(Scope scope);
Scope parse_scope(const std::string& text);  // "attention" | "layer" | "step"; throws std::invalid_argument

struct StepBreakdown {              // per layer (Scope::layer) or per step (Scope::step)
  double attention_s = 0;           // the combine, as LayoutModel::attention gives it
  double projections_s = 0;         // QKV and output projections
  double mlp_s = 0;                 // MLP, or the routed and shared experts and the router
  double tp_communication_s = 0;    // all-reduces of the hidden state (and the LM head's all-gather of logits)
  double tp_network_latency_s = 0;  // the part of it across domains whose latency is at least its transfer
  double other_s = 0;               // norms, rotary embedding, KV append
  double lm_head_s = 0;             // Scope::step only
  double ep_communication_s = 0;    // expert parallelism: the MoE layers' dispatches and combines
  double engine_s = 0;              // Scope::step: the serving engine's own work a step (ImplProfile::engine_step)
  double overlapped_s = 0;          // two micro-batches: the part of the above hidden under the other's compute (the
                                    // layer takes the parts' sum less this)
};

// Expert parallelism (Layout::experts.ep > 1) in an MoE layer. Each GPU dispatches its tokens (data-parallel
// attention: its own sequences; TP attention: its 1/tp share of the TP group's, the hidden states reduce-scattered
// over the group instead of all-reduced, all-gathered after the combine) to the GPUs holding their experts; the
// busiest GPU runs its routed experts on what it received (the weights of the experts that tokens touch, FLOPs of
// every copy), every GPU the router and the shared experts on its own tokens (held whole on each GPU); then the
// combine. Two micro-batches (DeepSeek's and SGLang's two-batch overlap) run each half batch's compute while the
// other's exchanges move: the layer takes 2 x max(compute, exchanges) of a half, each half streaming the weights
// again. Example: deepseek-v3 at EP 64 with DP attention, 128 tokens a GPU, the low-latency kernel on H800 nodes:
// dispatch ~184 us + combine ~350 us a layer, against ~0.3 ms of compute: exchange-bound, and two micro-batches
// hide the smaller of the two halves. Dense first layers keep the layout's TP MLP.
struct ExpertStep {
  MoeExchange dispatch;  // one micro-batch's
  MoeExchange combine;
  int tokens_per_gpu = 0;  // tokens a GPU dispatches a layer (all micro-batches)
  int micro_batches = 1;
  int moe_layers = 0;
  bool hidden_collectives = false;  // TP or DCP attention: the reduce-scatter and all-gather around the experts
  double compute_s = 0;             // per MoE layer and micro-batch: everything but the exchanges
  double exchange_s = 0;            // per MoE layer and micro-batch: dispatch + combine
  double experts_mlp_s = 0;         // per MoE layer (all micro-batches): router, shared and routed experts
};

// The bytes each part reads from HBM per step: weights, the KV cache the attention reads (the slowest shard's,
// with q and o), the KV append's writes. The step calibration's efficiencies are over these.
struct StepPartBytes {
  double attention = 0, projections = 0, mlp = 0, other = 0, lm_head = 0;
};

struct StepMemory {  // bytes per GPU
  double weights = 0;
  double kv_cache = 0;
  double buffers = 0;  // the combine's receive buffers, partial states and workspace
  double activations = 0;
  double total = 0;
  double capacity = 0;        // the smallest GPU's HBM
  long long max_seq_len = 0;  // the longest context whose KV cache fits beside the rest (0: nothing fits)
  long long max_batch = 0;    // the most sequences of this length whose KV cache fits beside the rest, in the whole
                              // layout (each GPU's own, times tp, with data-parallel attention)
};

// The tensor-parallel collectives of one decode step, as the step model costs them (and a real run checks its
// bytes against): per layer two all-reduces of the hidden state (after the output projection and after the MLP),
// then one all-gather of the logits. Sizes are nccl-tests' "size" (the whole buffer). Example: llama3.1-8b at
// batch 8: hidden 8 x 4,096 x 2 B = 65,536 B per all-reduce, 64 per step; logits 8 x 128,256 x 2 B = 2,052,096 B.
// With data-parallel attention (layout.hpp) the two collectives of a layer are an all-gather of every GPU's hidden
// states before the MLP and a reduce-scatter after it, each the whole batch's hidden states (nccl-tests' size).
struct StepCollectives {
  double hidden_allreduce_bytes = 0;
  int hidden_allreduces = 0;  // per step: 2 x layers
  double logits_allgather_bytes = 0;
  CollectiveOp attention_output_op = CollectiveOp::allreduce;  // after the output projection
  CollectiveOp mlp_output_op = CollectiveOp::allreduce;        // after the MLP
};
StepCollectives step_collectives(const Workload& workload, int tokens);
// The layout's: `tokens` the tokens each GPU's projections take (data-parallel attention: its own sequences).
StepCollectives step_collectives(const Workload& workload, int tokens, const Layout& layout);

struct StepResult {
  Scope scope = Scope::step;
  double layer_s = 0;           // one layer, everything in it
  double step_s = 0;            // time per output token: layers x layer_s + the LM head (Scope::layer: layer_s)
  double tokens_per_s = 0;      // batch / step_s (Scope::layer: 0, one layer makes no token)
  int post_attention_gpus = 1;  // the GPUs the output projection and the MLP split over
  int tokens_per_gpu = 1;       // the tokens each GPU's projections and MLP take (pass-q: its own sequences)
  StepBreakdown breakdown;
  StepPartBytes part_bytes;
  int calibrated_parts = 0;  // how many parts the cluster's step calibration costs (0: none, the rates alone)
  StepMemory memory;
  StepCollectives collectives;  // the TP collectives costed (step_collectives for the layout)
  int dense_layers = 0;         // MoE models' dense first layers (first_k_dense_replace); Scope::layer gives an MoE
  double dense_mlp_s = 0;       //   layer, and a dense layer's MLP takes dense_mlp_s instead of the MLP's
  double dense_layer_s = 0;     // one dense layer, everything in it (0: the model has none)
  std::optional<ExpertStep> experts;  // expert parallelism's exchanges (Layout::experts.ep > 1, MoE models)
  double gemm_flops_at_peak_s = 0;    // Scope::step: the step's GEMM FLOPs on one GPU (step_gemm_flops) at its peak
  int tp_collectives = 0;  // Scope::step: its TP collectives (2 a layer, the logits' all-gather), 0 on one GPU
  // What vLLM's PagedAttention kernels would read on the slowest GPU, a layer (Scope::layer) or the step (none with
  // latent attention); where the profile's engine decodes with them (EngineStep::paged_attention) the attention is
  // their time.
  PagedAttentionReads paged_attention;
};

// `attention`: LayoutModel::attention's for the same arguments. Throws std::invalid_argument for
// Scope::attention (nothing to add).
StepResult evaluate_step(const LayoutModel& layouts, const LayoutAttention& attention, DecodeAlgorithm algorithm,
                         const Workload& workload, long long seq_len, Scope scope);

}  // namespace treering::model
