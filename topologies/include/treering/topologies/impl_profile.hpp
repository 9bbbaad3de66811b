// Implementation profiles: how a program executes a decode plan, apart from the cluster it runs on and the
// workload it decodes. Two programs running the same algorithm on the same GPUs can differ by orders of
// magnitude: one launches a graph of fused kernels, another dispatches every operation from Python, copies the
// KV cache each step and waits on the host between layers. A profile lists those costs, each with the source
// it comes from, so that a prediction can name the implementation it predicts. Pure data; files load here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies {

// Which ranks run a piece of extra work: all, only the last (e.g. the one that appends the new token), or all
// but the last.
enum class ExtraRanks { all, last, others };

// Extra work per layer and generated token, besides the algorithm's own kernels and collectives: a memory-bound
// kernel sequence (RoPE over the cache, K/V copies) or a collective (a broadcast of q, a barrier).
struct ExtraWork {
  std::string what;
  std::string source;
  InputLocation location;               // of the entry, for errors found when it is applied
  std::vector<std::string> algorithms;  // decode algorithm names it applies to; empty: all
  ExtraRanks ranks = ExtraRanks::all;
  // Kernels: `kernels` launches moving kv_bytes x (the rank's cached K and V bytes) + expanded_kv_bytes x (the
  // same expanded to the query heads) + bytes.
  int kernels = 0;
  double kv_bytes = 0;
  double expanded_kv_bytes = 0;
  // A collective instead: "allreduce" or "broadcast" of `collective_bytes` ("q", "o", "stats" or a size).
  std::string collective;
  std::string collective_bytes;
  double bytes = 0;
  int host_round_trips = 0;  // host synchronisations after it (a .item(), a barrier's wait)
};

// Relative errors of an uncalibrated prediction made with this profile, from its validation against public data:
// a measurement m of a part predicted as x satisfies |x - m| / m <= error.
struct Uncertainty {
  double compute = 0;
  double communication = 0;
  // Communication across domains (nodes) at latency-bound sizes, where the public data puts the uncalibrated
  // model furthest off; the YAML's `network_latency`, communication's when absent.
  double network_latency = 0;
  std::string source;
};

// How the implementation runs the prompt's prefill when a timed generation includes it (`--prefill`).
struct PrefillProfile {
  // "ring-causal-skip": the prompt in p contiguous blocks, one per rank; p ring steps per layer, at step s rank r
  // attends to the K/V block it holds only if s <= r (its own block, causally masked, at s = 0), while the block
  // travels on to the next rank (expanded to the query heads under kv_expansion); ranks meet every layer, so a
  // layer takes the last rank's time: its diagonal block and p - 1 full ones, each step at least its transfer.
  std::string attention_schedule;
  double attention_efficiency = 0;  // of the GPU's peak FLOP rate, what the attention kernel reaches
  std::string source;
};

// A serving engine's own cost per decode step beyond the model's kernels. Its host work that the GPU waits for
// (scheduling, preparing inputs, sampling, detokenising, Python): fixed + per_sequence x the sequences in the batch.
// And, where its GEMM library loses efficiency past a few tokens (gemm_flop_efficiency > 0), the step's GEMM FLOPs
// run at that fraction of the GPU's peak FLOP rate on top of streaming their weights, instead of hidden under it.
// Example: fixed 0.8 ms and 12 us a sequence at batch 32: 0.8 + 32 x 0.012 = 1.184 ms a step; with
// gemm_flop_efficiency 0.05 and llama3.1-8b's 7.5e9 GEMM parameters at batch 32 on one 1,307 TFLOP/s GPU,
// 2 x 32 x 7.5e9 / (0.05 x 1.307e15) = 7.3 ms more.
// vLLM's PagedAttention decode kernels (csrc/attention/attention_kernels.cu; vllm/attention/ops/paged_attn.py picks
// one), where an engine decodes with them rather than a FlashAttention-style kernel (vLLM 0.6's ROCm backend): a
// thread block per (sequence, query head) reads its K/V head's cache, so a GQA model's K/V is read once per query
// head; v1 (the whole context in one block) where the context is <= 8,192 tokens and either <= 512 (one partition)
// or sequences x query heads > 512, else v2 (512-token partitions, then a reduction). Each runs at its fraction of
// the GPU's rated HBM bandwidth over those per-query-head reads (above 1 where caches serve a group's re-reads).
// Example: llama3-8b on one GPU, 64 sequences at context 3,072: 64 x 32 > 512 -> v1; 64 x 32 x 3,072 x 2 x 128 x 2
// = 3.2 GB a layer; at v1_bandwidth_efficiency 0.3 of 5.3 TB/s: 2.0 ms a layer, 65 ms over 32 layers.
constexpr double kPagedEfficiencyMin = 0.01;  // the loader's range for either efficiency
constexpr double kPagedEfficiencyMax = 4.0;
constexpr int kDefaultMaxSeqLenToCapture = 8192;  // vLLM's max_seq_len_to_capture default (and v1's reference)
// v1 keeps a context's logits in shared memory, sized when a CUDA graph is captured for the longest context it serves,
// min(the model's max_position_embeddings, max_seq_len_to_capture: 8,192 by default) x 4 B, so the blocks a
// multiprocessor holds at once are its shared memory over that (v1_shared_memory_per_multiprocessor: 0, not modelled);
// v1_bandwidth_efficiency is the rate at an 8,192-token capture's occupancy, and a shorter capture's v1 runs as many
// times faster as it holds more blocks. Example: MI300X's 64 KiB of LDS a CU holds 2 blocks of 32 KiB (8,192 tokens)
// and 4 of 16 KiB (Llama 2's 4,096): Llama 2's v1 at twice the efficiency.
struct PagedAttention {
  double v1_bandwidth_efficiency = 0;
  double v2_bandwidth_efficiency = 0;
  double v1_shared_memory_per_multiprocessor_bytes = 0;
  int max_seq_len_to_capture = kDefaultMaxSeqLenToCapture;
};

// And each of the step's tensor-parallel collectives (2 a layer and the logits' all-gather, with more than one GPU)
// may cost `per_collective_s` more than the model's estimate of it: the engine's all-reduce path (its library's own
// latency at these sizes, a copy or a synchronisation around it). Example: 60 us more for each of a 32-layer model's
// 65 collectives at TP 8: 3.9 ms a step.
struct EngineStep {
  double fixed_s = 0;
  double per_sequence_s = 0;
  double gemm_flop_efficiency = 0;  // 0: none (the GEMMs as the step model costs them, their FLOPs hidden)
  std::string source;
  std::optional<PagedAttention> paged_attention;  // none: the model's own decode attention kernel
  double per_collective_s = 0;
  // More for each decoder layer of the step, at any TP: the engine's kernels and gaps a layer beyond the model's
  // (unfused norms, rotary embedding, activation; launch gaps inside the graph). Example: 133 us a layer, Llama 3 8B's
  // 32 layers: 4.2 ms a step, its 70B's 80: 10.6 ms. (engine_step's `per_layer`, one time; not the profile's
  // top-level `per_layer` list, ImplProfile::per_layer, of extra work the plans do in each layer.)
  double per_layer_s = 0;
  // `gemm_flops_at_peak_s`: the step's GEMM FLOPs on one GPU over its peak FLOP rate; `collectives`: its TP ones;
  // `layers`: its decoder layers.
  double step_s(int sequences, double gemm_flops_at_peak_s = 0, int collectives = 0, int layers = 0) const {
    const double gemm_s = gemm_flop_efficiency > 0 ? gemm_flops_at_peak_s / gemm_flop_efficiency : 0.0;
    return fixed_s + per_sequence_s * sequences + gemm_s + per_collective_s * collectives + per_layer_s * layers;
  }
};

struct ImplProfile {
  std::string name;
  std::string description;
  std::string implementation;             // the program it models (repository, version, files)
  std::string origin;                     // "preset:NAME" or the file path
  std::optional<double> kernel_launch_s;  // per kernel launched; none: the GPU's own figure (calibrated or model)
  // Host time an eager framework spends per kernel it dispatches (Python, dispatcher, launch): the host issues a
  // token's kernels no faster than this each, so a step takes at least kernels x this (none: not host-bound).
  std::optional<double> eager_dispatch_s;
  double collective_call_s = 0;            // host-side cost of each collective call, on top of the library's
  double host_round_trip_s = 0;            // one host synchronisation: the GPU idles while the host catches up
  double first_call_s = 0;                 // a one-off cost inside the timed region (tracing, compilation)
  bool kv_expansion = false;               // GQA K/V expanded to the query heads before attention (read, sent)
  bool cuda_graphs = false;                // the decode step replays from a CUDA graph (no host dispatch)
  bool ring_overlap = true;                // a ring step's transfer runs beside its attention
  int ring_exchanges_per_step = 1;         // separately synchronised exchanges per ring step (latency each)
  int ring_host_round_trips_per_step = 0;  // host synchronisations per ring step
  int other_kernels_per_layer = 0;         // the rest of a decoder layer's kernels (projections, norms, MLP)
  std::string collective_algorithm;        // every collective by this algorithm ("ring"); empty: NCCL's pick
  int partial_o_bytes = 0;                 // element size of partial outputs as they travel (0: the workload's)
  std::vector<ExtraWork> per_layer;
  std::optional<PrefillProfile> prefill;  // none: the model's generic prefill estimate
  std::optional<EngineStep> engine_step;  // none: no engine around the step (a plain CUDA graph of kernels)
  Uncertainty uncertainty;
  std::map<std::string, std::string> sources;  // key -> where its value comes from
};

// Parses and checks a profile. Throws InputError ("FILE:LINE:COL: error: ...") on any problem.
//   name: my-impl                     # required
//   description: "..."                # required
//   implementation: "..."             # required: what it models
//   kernel_launch: 4us                # optional; each quantity either plain or {value: ..., source: "..."}
//   eager_dispatch: 25us              # optional: host time per kernel an eager framework dispatches
//   collective_call: 10us             # optional (0)
//   host_round_trip: 20us             # required when anything makes host round trips
//   first_call: 1.5s                  # optional (0)
//   kv_expansion: false               # optional
//   cuda_graphs: false                # optional; true forbids host round trips and dispatch costs
//   other_kernels_per_layer: 0        # optional
//   collective_algorithm: ring        # optional: every collective by this algorithm (none: the fastest)
//   partial_o_bytes: 4                # optional: partial outputs travel in fp32
//   ring: {overlap: true, exchanges_per_step: 1, host_round_trips_per_step: 0, source: "..."}   # optional
//   prefill: {attention_schedule: ring-causal-skip, attention_efficiency: 0.37, source: "..."}   # optional
//   engine_step: {fixed: 0.8ms, per_sequence: 12us, source: "..."}  # optional: a serving engine's own work a step
//                                     # (gemm_flop_efficiency: 0.05 optional, in (0, 1]: its GEMMs' FLOPs exposed;
//                                     # paged_attention: {v1_bandwidth_efficiency: 0.3, v2_bandwidth_efficiency: 1.2}
//                                     # optional, each in [0.01, 4]: vLLM's PagedAttention decodes instead;
//                                     # v1_shared_memory_per_multiprocessor: 64KiB, max_seq_len_to_capture: 8192
//                                     # optional: v1's occupancy by the captured context;
//                                     # per_collective: 60us optional: more for each TP collective of the step;
//                                     # per_layer: 130us optional: more for each decoder layer of the step)
//   uncertainty: {compute: 0.15, communication: 0.3, network_latency: 0.6, source: "..."}       # required
//                                     # (network_latency optional: communication's when absent)
//   per_layer:                        # optional: extra work per layer and token
//     - {what: "...", kernels: 5, kv_bytes: 5, algorithms: [ring], ranks: all, source: "..."}
//     - {what: "...", collective: broadcast, bytes: q, host_round_trips: 1, source: "..."}
ImplProfile load_impl_profile_text(const std::string& yaml_text, const std::string& source_name);
ImplProfile load_impl_profile_file(const std::string& path);

// The profile as YAML that load_impl_profile_text reads back to the same values and sources (a fitted profile is
// written this way). Durations are written to 9 significant digits.
std::string impl_profile_yaml(const ImplProfile& profile);

// The presets compiled into the binary (topologies/impls/*.yaml), sorted by name.
const std::vector<ImplProfile>& impl_presets();

// A preset name or a path to a YAML file (anything containing '/' or ending in .yaml/.yml); an unknown name is an
// InputError listing the presets.
ImplProfile load_impl_profile(const std::string& name_or_path);

// The profile used when none is named: "efficient".
const ImplProfile& default_impl_profile();

const char* to_string(ExtraRanks ranks);

}  // namespace treering::topologies
