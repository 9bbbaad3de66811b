// One whole decode step of a Llama-architecture model, run for real (treering-realrun step): what each
// tensor-parallel rank holds and moves, and what a measurement of the step records. Host logic only; the CUDA
// backend (src/cuda/step_*.cpp) runs the step, and this file's checks run without a GPU.
//
// The step, per layer: RMSNorm, the fused QKV projection, RoPE on q and k with the KV append at the step's
// position, split-KV attention over the cache (the GPU path's kernel), the output projection with the residual
// add, RMSNorm, the fused gate/up projection, SiLU(gate) x up, the down projection with the residual add; then the
// final RMSNorm, the LM head and argmax. The parts are predict --scope step's: projections (QKV, output), mlp
// (gate/up, activation, down), attention (the kernel and its 16-bit output), other (norms, RoPE + KV append),
// lm_head (final norm, LM head, argmax) and tp_communication (the loopback's all-reduces and all-gather).
//
// Tensor parallelism splits as Megatron-LM does: query and KV heads, the MLP's width and the LM head's rows over
// the tp ranks; the output and down projections leave partial sums that an all-reduce adds. Example: llama3.1-8b
// at tp 2: 16 query and 4 KV heads per rank, QKV 3,072 x 4,096, MLP width 7,168, LM head 64,128 rows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "treering/model/step.hpp"
#include "treering/model/workload.hpp"

namespace treering::realrun {

struct StepShape {  // one TP rank's share of the model and of the batch's state
  std::string workload;
  int layers = 0;
  int hidden = 0;  // the full hidden size (every rank holds the whole hidden state)
  int head_dim = 0;
  int query_heads = 0;   // per rank
  int kv_heads = 0;      // per rank
  int intermediate = 0;  // the MLP's width per rank
  int vocab = 0;         // the LM head's rows per rank
  int full_vocab = 0;
  bool tied_embeddings = false;
  int tp = 1;
  int batch = 1;
  long long seq_len = 0;  // tokens cached before the step: it attends over seq_len + 1
  long long qkv_rows() const { return static_cast<long long>(query_heads + 2 * kv_heads) * head_dim; }
  long long attention_width() const { return static_cast<long long>(query_heads) * head_dim; }
};

// Throws std::invalid_argument when the workload cannot run as such a step: no intermediate_size or vocab_size
// (attention-only or parameter-count workloads), experts, 8-bit weights, fp16 (the step is bf16), a head dim the
// attention kernel lacks (64, 128), or a tp that does not divide the query heads, the KV heads, the MLP width and
// the vocabulary; batch < 1, seq_len < 0.
StepShape step_shape(const model::Workload& workload, int batch, long long seq_len, int tp);

struct StepBytes {         // one rank's device memory
  double weights = 0;      // the layers' matrices and norms, the final norm and the LM head (the input embedding is
                           // not held: the step starts from the new token's hidden state)
  double kv_cache = 0;     // layers x 2 x (seq_len + 1) x batch x kv_heads x head_dim x 2 B
  double activations = 0;  // the hidden states, QKV, attention output, MLP's, logits and the attention's workspace
  double total() const { return weights + kv_cache + activations; }
};
StepBytes step_bytes(const StepShape& shape);

// Throws std::invalid_argument, naming both figures, when `ranks_on_device` ranks' bytes exceed `free_bytes`.
void check_fits(const StepShape& shape, int ranks_on_device, double free_bytes);

enum class StepPart { attention, projections, mlp, other, lm_head, tp_communication };
constexpr int kStepParts = 6;
const char* to_string(StepPart part);

struct StepCollectiveCount {  // what one rank put into collectives over the step (nccl-tests' sizes)
  int allreduces = 0;
  double allreduce_bytes = 0;  // each
  int allgathers = 0;
  double allgather_bytes = 0;  // each: the gathered whole
};
// The model's collectives for the shape (model::step_collectives; none at tp 1).
StepCollectiveCount expected_collectives(const model::Workload& workload, const StepShape& shape);

struct StepMeasurement {
  StepShape shape;
  std::vector<double> step_s;  // seconds per step, one sample per CUDA-graph replay
  // The parts pass: a mark between two parts costs time of its own (an event node: about 2 us on an H100), so
  // the pass's whole step is longer than the plain graph's. part_raw_s is each part's median as timed;
  // part_s takes off each of its intervals' share of the excess: mark_overhead_s = (parts_pass_s - median
  // step_s) / intervals. Example: 16 layers, 7 intervals a layer + the LM head's: 113; 1.969 - 1.653 ms over
  // 113 = 2.8 us; "other" (3 a layer, 48 intervals) loses 134 us.
  std::array<double, kStepParts> part_s{};
  std::array<double, kStepParts> part_raw_s{};
  std::array<int, kStepParts> part_intervals{};
  double mark_overhead_s = 0;
  double parts_pass_s = 0;          // the median whole step of the parts pass
  std::string parts_method;         // how the parts were timed
  StepCollectiveCount collectives;  // rank 0's
  std::vector<int> next_tokens;     // argmax of the first sequences (a check that it ran)
  long long non_finite = 0;         // NaN or infinite values in the final hidden state
  StepBytes bytes;
};

// Where the step's random values come from (hashed_value streams, input_hash.hpp), so that the host reference
// makes the same ones: rank r's tensors take streams step_rank_stream(seed, r) + 0, 1, ... in this order: per
// layer the attention norm, QKV [qkv_rows][hidden], O [hidden][attention_width], the MLP norm, gate/up
// [2 intermediate][hidden] (gate rows first), down [hidden][intermediate], the K cache and the V cache ([token][batch]
// [kv_heads][head_dim], seq_len + 1 tokens): 8 a layer; then the final norm and the LM head [vocab][hidden]. A
// matrix's values are hashed x step_scale(fan-in) (variance 1 / fan-in); norms' and caches' hashed x 1. The new
// tokens' hidden state [batch][hidden]: stream step_hidden_stream(seed), x 1.
std::uint64_t step_rank_stream(std::uint64_t seed, int rank);
std::uint64_t step_hidden_stream(std::uint64_t seed);
float step_scale(long long fan_in);  // sqrt(3 / fan_in); 1 for 0

struct StepOutputs {
  std::vector<float> hidden;  // rank 0's final hidden state, [batch][hidden]
  std::vector<float> logits;  // [batch][full vocab] (gathered over the ranks)
  std::vector<int> next_tokens;
};
// The step on the host in double precision, rounded to bf16 where the GPU stores a tensor (norm outputs, QKV, q
// and k after RoPE, the attention output, projections, the residual stream, gate/up, the activation, partial sums,
// logits): the GPU's step should differ from it by accumulation order and the attention kernel's bf16 probabilities
// only. For small shapes (it holds every rank's weights).
StepOutputs reference_step(const StepShape& shape, std::uint64_t seed);

namespace cuda {
// One step of `shape` (every rank, loopback) and its outputs, for checks.
StepOutputs run_step_once(const StepShape& shape, std::uint64_t seed);

// Runs the step of `shape` on the current GPU (its tp ranks as loopback ranks, one after another, the collectives
// device copies) and times it: `warmup` steps, then a CUDA graph of one step replayed untimed until steady (20
// replays and 0.2 s at least), then `iterations` times, one event pair around each replay; then the parts, from a graph
// with event nodes at the parts' boundaries (the same kernels, replayed until 5 samples), or from uncaptured steps with
// events where the graph refuses such nodes. Throws std::invalid_argument when it does not fit the free memory
// (check_fits), std::runtime_error without a CUDA backend or when the device fails.
StepMeasurement measure_step(const StepShape& shape, int warmup, int iterations, std::uint64_t seed);
}  // namespace cuda

}  // namespace treering::realrun
