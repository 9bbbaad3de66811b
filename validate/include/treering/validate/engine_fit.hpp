// Predicting a serving engine's latency benchmark (engine_runs.hpp) like for like, and fitting the engine's own work
// per step (topologies::EngineStep: its host's, and its GEMMs' exposed FLOPs) to such runs.
//
// A latency run generates output_len tokens for `batch` prompts of input_len tokens at once: one prefill of the
// whole batch (which gives the first token), then output_len - 1 decode steps, the context growing from input_len
// + 1 to input_len + output_len - 1. The step model (model/step.hpp: tp GPUs of one domain, the tree at cp 1, the
// profile's engine work included) is linear in the context wherever it is memory-bound, so the decode steps take
// (output_len - 1) x the step at the middle context, input_len + output_len / 2. The prefill takes its weights'
// streaming or its FLOPs at kPrefillEfficiency of the TP group's peak, whichever is longer:
//   FLOPs = batch x (2 x parameters x N + 2 x layers x N^2 x query heads x head dim)
// plus one step's host work (EngineStep's fixed and per-sequence parts; the prompt's GEMMs are FLOP-bound already).
// Example: llama3.1-8b, batch 8, N = 32 on one H100: 2 x 8.03e9 x 256 = 4.1 TFLOP
// -> / (989 TFLOP/s x 0.5) = 8.3 ms; then 127 steps of ~6 ms at context 96.
//
// A serving run (vllm bench serve) keeps C requests decoding; each request, in its output_len - 1 steps after the
// first token, sees the other C - 1 finish and be replaced, and each newcomer's prefill runs inside a decode step
// (chunked prefill), so the mean TPOT is the step at batch C and the middle context plus (C - 1) / (output_len -
// 1) prefills of one prompt (its FLOPs as above, batch 1). Example: llama3.1-8b, C = 64, 1,024-token prompts, 128
// outputs on one H100: a prompt is 2 x 8.03e9 x 1,024 = 16.4 TFLOP -> 33 ms; 63 / 127 of it = 16.5 ms a step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/validate/engine_runs.hpp"

namespace treering::validate {

// The share of a GPU's memory an engine gives its weights and KV cache: vLLM's gpu_memory_utilization default
// (0.9, vllm/engine/arg_utils.py) and TensorRT-LLM's kv_cache_free_gpu_mem_fraction default (0.9 of what the weights
// leave). A run whose batch needs more at its last token cannot keep every sequence decoding at once: the engine
// queues or preempts, and the step model (every sequence in every step) does not describe it.
// Within that share the engine keeps room for its activations: vLLM sizes the KV cache after a profiling forward
// pass of max_num_batched_tokens (4,096-8,192 tokens by default: the model's context length), whose logits and MLP
// activations take about 1 GB for a 7-70B model (e.g. 4,096 x 32,000 logits x 6 B = 0.8 GB).
constexpr double kEngineMemoryFraction = 0.9;
constexpr double kEngineWorkspaceBytes = 1e9;

struct EnginePrediction {
  double predicted_s = 0;  // the benchmark's quantity (latency: the whole run, prefill + decode steps)
  double prefill_s = 0;    // latency: the batch's prefill; serve: one prompt's
  // serve: the mean time to the first token: a newcomer waits half a step on average for the step under way, then
  // its prefill runs inside the next step: 1.5 x step + one prompt's prefill (the HTTP and tokenising time not
  // counted). Example: 7.4 ms steps and a 33.8 ms prompt: 11.1 + 33.8 = 44.9 ms.
  double ttft_s = 0;
  // serve: the inter-token latencies. A fraction (C - 1) / (output_len - 1) of the steps carries a newcomer's
  // prefill (its whole prompt in one step, as vLLM's chunked prefill does for a prompt within its token budget),
  // the others are plain steps: the median ITL is a plain step while that fraction is under a half, and the 99th
  // percentile is a step with a prefill once 1 % of the steps or more carry one. Example: C = 16, output 128:
  // 15 / 127 = 11.8 % of the steps -> median = the step, p99 = the step + one prompt's prefill.
  double median_itl_s = 0;
  double p99_itl_s = 0;
  double step_s = 0;                // one decode step at the middle context, the engine's work included
  double engine_step_s = 0;         // of which the engine's own work (EngineStep: host work, exposed GEMM FLOPs)
  double gemm_flops_at_peak_s = 0;  // the step's GEMM FLOPs on one GPU at its peak FLOP rate (the fit's third term)
  double attention_s = 0;  // of the step, its attention (the profile's PagedAttention kernels where it has them)
  // what vLLM's PagedAttention v1 and v2 kernels would read in the step, at the GPU's rated HBM bandwidth (the fit's
  // fourth and fifth terms; v1's scaled by its occupancy where the profile has the kernels; 0 with latent attention)
  double paged_v1_at_rated_s = 0;
  double paged_v2_at_rated_s = 0;
  int tp_collectives = 0;        // the step's TP collectives (the fit's sixth term; 0 on one GPU)
  int layers = 0;                // the model's decoder layers (the fit's seventh term)
  long long decode_steps = 0;    // output_len - 1
  long long middle_context = 0;  // input_len + output_len / 2
  // Why the run's batch does not fit in kEngineMemoryFraction of a GPU at its last token (KV cache + weights), or
  // "": a run that does not fit is reported, not predicted (validate) nor fitted (calibrate).
  std::string memory_shortfall;
};

// The run as the model predicts it on `spec` (its first group's GPUs; tp of them in one domain) with `profile`.
// Throws topologies::InputError when the layout does not fit or the workload is unknown.
EnginePrediction predict_engine_run(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                                    const EngineRun& run);

// Fewer runs than this pin the fixed work but not the slope per sequence: with a prior that has one, the slope is
// kept and the fixed work alone fitted. On the public engine tables when the rule was chosen (validate/README.md,
// "Serving engines"), three runs fitting both moved the rest's median |error| to 8.7-20.6 % on the NVIDIA tables,
// fitting the fixed work alone to 6.6-8.5 % (and the MI300X table from 45.7 % to 26.5 %, where both gave 30.2 %).
constexpr std::size_t kRunsToFitSlope = 10;

struct EngineStepFit {
  topologies::EngineStep step;           // fitted: fixed and per sequence (its source says from what)
  bool per_sequence_fitted = false;      // false: every run had one batch size, or its slope came out negative (0 kept)
  bool per_sequence_from_prior = false;  // fewer than kRunsToFitSlope runs: the prior's slopes kept
  bool gemm_fitted = false;              // gemm_flop_efficiency fitted (else 0: the GEMMs' FLOPs hidden)
  bool per_collective_fitted = false;    // per_collective_s fitted (else 0, or the prior's below 10 runs)
  bool per_layer_fitted = false;         // per_layer_s fitted (else 0, or the prior's below 10 runs)
  // From 10 runs, a prior's GEMM, per-collective or per-layer term the runs cannot tell apart (one GEMM size a
  // sequence, one collective count, one depth) is kept, not dropped:
  bool gemm_from_prior = false;
  bool per_collective_from_prior = false;
  bool per_layer_from_prior = false;
  bool paged_v1_fitted = false;  // the PagedAttention efficiencies fitted (else the prior's held)
  bool paged_v2_fitted = false;
  std::vector<double> errors_before, errors_after;  // relative, (predicted - measured) / measured, per run
};

// Least squares on relative errors: each run's measured time m, the prediction without engine work x, its steps n
// (EngineRun::engine_steps: latency output_len, serve 1) and one step's GEMM FLOPs at the GPU's peak F give
// (x + n (fixed + per_sequence x batch) + d F / gemm_flop_efficiency - m) / m (d: the decode steps, n - 1 for a
// latency run, else n), linear in fixed, per_sequence and
// 1 / gemm_flop_efficiency; minimised over the runs with every unknown >= 0 (nonnegative least squares). The GEMM
// term is fitted only from kRunsToFitSlope runs or more whose GEMM FLOPs a sequence differ (several models or TP
// degrees: else it is the per-sequence term again), and kept only at an efficiency in [1e-4, 1] (else it is dropped
// and the other two refitted: FLOPs faster than the peak are the per-sequence or fixed work misread). One batch
// size: per_sequence is not fitted. Example: two runs,
// batch 1 and 32, 128 steps each, measured 0.1 s and 0.2 ms a step over the model at batch 1 and 1.0 ms at batch 32
// give per_sequence (1.0 - 0.2) / 31 = 25.8 us and fixed 0.2 - 0.0258 = 0.174 ms when both fit exactly. With fewer
// than kRunsToFitSlope runs and a prior whose engine_step has a slope (per sequence or GEMM), the slopes are kept
// and `fixed` alone fitted, by Huber's loss rather than squares (threshold 1.345 / 1.645 x the prior's band): one run
// of a few far outside the prior's band moves it no more than a run at the threshold. Where the prior decodes with
// vLLM's PagedAttention (EngineStep::paged_attention), the runs' attention is those kernels': the model's attention
// leaves x, and the kernels' reads at the rated HBM bandwidth (d R1, d R2) are two more terms, linear in 1 /
// v1_bandwidth_efficiency and 1 / v2_bandwidth_efficiency; each is fitted from kRunsToFitSlope runs and kept only at an
// efficiency the loader accepts (kPagedEfficiencyMin-Max), else the prior's held. The engine's extra per TP collective
// (EngineStep::per_collective_s, d C / m with C the step's TP collectives) is fitted from kRunsToFitSlope runs whose C
// differ (models or TP degrees, TP 1 having none) and kept only up to 1 ms (else dropped); below that, or when the
// runs' collective counts are all one, a prior's is kept (a prior's GEMM term likewise when the runs' GEMM FLOPs a
// sequence are all one). The engine's extra per decoder layer (EngineStep::per_layer_s, d L / m with L the model's
// layers) likewise, from kRunsToFitSlope runs of models of different depths with runs on one GPU among them (one
// depth: it is the fixed work again; at TP > 1 alone, C = 2 L + 1 and it trades with the per-collective term), kept
// up to 1 ms. `before` is the profile the runs are predicted with (its engine_step replaced by the fit).
// Throws InputError with no run.
EngineStepFit fit_engine_step(const topologies::ClusterSpec& spec, const topologies::ImplProfile& before,
                              const std::vector<EngineRun>& runs);

}  // namespace treering::validate
