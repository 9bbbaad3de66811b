// Decode plans: what each algorithm does for one attention layer of one decoding step, as data. The model
// evaluates a plan here; the simulator replays it with contention; the real run executes it. Pure.
//
// Sizes per layer (batch b, query heads n_h, KV heads n_kv, head dim d_h, element size e bytes):
//   q and o:        b * n_h * d_h elements of e bytes each;
//   K and V:        2 * n_kv * d_h * b elements of e bytes per token;
//   lse, max, den:  b * n_h elements of `stats_bytes` (4: fp32 by default, as FlashInfer keeps lse).
// Example (paper-mha16, b = 1): q = 16 * 128 * 2 B = 4 KiB; K and V = 2 * 16 * 128 * 2 B = 8 KiB per token.
// Latent attention (workload.hpp), absorbed: q is b * n_h * (kv_lora_rank + qk_rope_head_dim), o b * n_h *
// kv_lora_rank, and the cache one latent of kv_lora_rank + qk_rope_head_dim values per token at kv_cache_bytes.
// Example (deepseek-v3 at tp 8, b = 1): q = 16 * 576 * 2 B = 18,432 B; o = 16 * 512 * 2 B = 16,384 B; 1,152 B a token.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "treering/model/collectives.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/impl_profile.hpp"

namespace treering::model {

// ring: pass-KV (the paper's baseline); tree, tree-fused, tree-lse, allgather-merge: the paper's tree and our
// variants; pass-q: Meta's context parallelism for decode (arXiv 2411.01783): query blocks travel the ring,
// partial states return to their sequences' owners in one all-to-all; a2a: NVIDIA Helix (arXiv 2507.07120):
// one all-to-all of each head slice's partial states to the rank that owns the slice; ag-rs: vLLM's decode
// context parallel: all-gather of lse, local rescale, reduce-scatter of the outputs.
enum class DecodeAlgorithm : int { ring, tree, tree_fused, tree_lse, allgather_merge, pass_q, a2a, ag_rs };
// Each algorithm's facts are its descriptor in decode_algorithms.hpp's table; these read it.
struct DecodeAlgorithmInfo;
const char* to_string(DecodeAlgorithm algorithm);
DecodeAlgorithm parse_decode_algorithm(const std::string& text);  // throws topologies::InputError
const std::vector<DecodeAlgorithm>& all_decode_algorithms();
// The paper's comparison (ring, tree, tree-fused, tree-lse, allgather-merge): what predict, simulate, the
// main job and the Python API run when no algorithm is named; the engines' combines are asked for by name.
const std::vector<DecodeAlgorithm>& paper_decode_algorithms();

// Where a combine leaves the attention's output: on every rank (ring, tree, tree-fused, tree-lse,
// allgather-merge), split by sequence (pass-q: each rank holds its own sequences'), or split by head (a2a, ag-rs:
// each rank holds a slice of the heads, which the output projection then takes as its tensor-parallel input).
enum class OutputSplit { replicated, by_sequence, by_head };
OutputSplit output_split(DecodeAlgorithm algorithm);

// Tokens [first, first + count) of the KV cache held by one rank. N over p: the first N mod p ranks hold one
// token more; ranks past N hold none (count 0: lse = -inf, contributes nothing).
struct Shard {
  long long first = 0;
  long long count = 0;
};
std::vector<Shard> split_tokens(long long tokens, int ranks);

// pass-q: the sequences of the batch whose queries rank `owner` holds, and a2a: the query heads whose merged
// output it holds; both split as split_tokens splits tokens (the first b mod p ranks one more).
// Example: batch 5 on 2 ranks: rank 0 owns sequences 0-2, rank 1 sequences 3-4.
Shard owned_sequences(int batch, int ranks, int owner);
Shard owned_heads(int heads, int ranks, int owner);

struct Transfer {
  int from = 0;  // ranks
  int to = 0;
  double bytes = 0;
};

enum class PhaseKind {
  attend,       // every rank: flash-decoding over its own shard -> (o, lse)
  ring_pass,    // p - 1 rounds: send the held KV block to rank + 1 while attending to it; then the last block
  collective,   // a collective over all ranks (`op`, `bytes` per rank as CollectiveRequest counts them)
  transfers,    // point-to-point sends, all at once; each receiver then merges what it got (`merge_states`)
  merge,        // every rank merges `merge_states` partial states locally
  elementwise,  // every rank (or `ranks`) runs `kernels` small kernels moving `bytes` (rescale, divide, copies)
  host,         // every rank's GPU idles `time_s` while its host catches up (a host round trip, a compilation)
  q_ring,       // pass-q: p rounds: attend the query block held (its owner's sequences) to the local shard while
                // sending it to rank + 1; the partial states stay on the rank that made them
};

// What a phase does with the partial states, so that an executor runs it by its role and not by its position in
// the plan (an implementation profile puts its own work in front: apply_impl). The combines' roles:
//   tree, tree-fused: lse_max, then rescale (numerator o e^(lse-m) and denominator e^(lse-m); tree-fused packs
//     them as [numerator | denominator]), numerator_sum and denominator_sum (tree-fused: rescaled_sum), divide;
//   ring: kv_ring, normalise;  tree-lse: state_reduce and output_broadcast transfers;
//   allgather-merge: state_gather, merge_gathered;  pass-q: q_ring, states_to_sequence_owners;
//   a2a: states_to_head_owners;  ag-rs: lse_gather, rescale_to_global, rescaled_reduce_scatter.
// query_gather: decode context parallelism inside a TP group (PlanOptions::gather_queries): before attending, the
//   ranks all-gather the queries of the heads they attend (each projected its own slice of them).
// implementation: work an implementation profile adds (copies, host round trips): time, no data of the combine.
enum class PhaseRole {
  attention,
  kv_ring,
  q_ring,
  normalise,
  lse_max,
  rescale,
  numerator_sum,
  denominator_sum,
  rescaled_sum,
  divide,
  state_reduce,
  output_broadcast,
  state_gather,
  merge_gathered,
  states_to_sequence_owners,
  states_to_head_owners,
  lse_gather,
  rescale_to_global,
  rescaled_reduce_scatter,
  query_gather,
  implementation,
};
const char* to_string(PhaseRole role);

struct Phase {
  PhaseKind kind = PhaseKind::attend;
  PhaseRole role = PhaseRole::attention;
  std::string label{};
  CollectiveOp op = CollectiveOp::allreduce;
  double bytes = 0;               // collective: its size; elementwise: bytes touched per rank
  std::vector<Transfer> sends{};  // transfers
  int merge_states = 0;           // transfers: states merged at each receiver (its own + received); merge: states
  std::optional<CollectiveAlgorithm> algorithm{};  // collective: run by this algorithm (else the fastest, NCCL's pick)
  int element_bytes = 0;                           // collective: bytes of one element (0: mixed sizes)
  int kernels = 1;                                 // elementwise: kernels launched
  topologies::ExtraRanks ranks = topologies::ExtraRanks::all;  // elementwise: the ranks that run it
  double time_s = 0;                                           // host: its duration
  bool once_per_call = false;  // host: paid once per timed call, not per layer (a first call's compilation)
  double merge_fraction = 1;   // transfers: each merged state is this fraction of a full one (a2a: a head
                               // slice; pass-q: one owner's sequences), the largest receiver's
};

struct PlanSizes {
  double q_bytes = 0;
  double o_bytes = 0;
  double kv_bytes_per_token = 0;
  double stats_bytes = 0;  // one of lse / max / denominator
  double state_bytes = 0;  // a partial state (o, lse)
};

// How an implementation runs a plan (an ImplProfile, applied by apply_impl), apart from the plan's dataflow: the
// profile itself, K/V expanded to the query heads (the plan's sizes.kv_bytes_per_token is the expanded figure),
// each kernel's launch cost when the profile sets it, a host-side cost per collective call, separate exchanges
// and host time per ring step, the launches of the layer's other kernels, and host time per kernel dispatched.
struct ImplCosts {
  std::shared_ptr<const topologies::ImplProfile> profile;  // none: the default profile ("efficient")
  const topologies::ImplProfile& profile_or_default() const;
  double kv_expansion = 1;
  std::optional<double> kernel_launch_s;
  double collective_call_s = 0;
  int ring_exchanges_per_step = 1;
  double ring_step_host_s = 0;
  int other_kernels_per_layer = 0;
  std::optional<double> eager_dispatch_s;  // ImplProfile::eager_dispatch_s
  bool operator==(const ImplCosts&) const = default;
};

struct DecodePlan {
  DecodeAlgorithm algorithm = DecodeAlgorithm::tree;
  const DecodeAlgorithmInfo* info = nullptr;  // the algorithm's descriptor (decode_algorithms.hpp), set by make_plan
  Workload workload;
  long long seq_len = 0;
  std::vector<int> gpus;      // rank -> GPU; node-contiguous by default
  std::vector<Shard> shards;  // rank -> the shard it holds at the start
  PlanSizes sizes;
  std::vector<Phase> phases;
  bool ring_overlap = true;  // PlanOptions::ring_overlap
  ImplCosts costs;           // how the implementation runs it (apply_impl)
};

// equal: N / p tokens each (split_tokens). by_speed: in proportion to each GPU's speed, the split that minimises
// the slowest GPU's attention (split_by_speed, compute.hpp): what a cluster of mixed GPUs wants.
enum class TokenSplit { equal, by_speed };
const char* to_string(TokenSplit split);
TokenSplit parse_token_split(const std::string& text);  // "equal" | "by-speed"; throws std::invalid_argument

struct PlanOptions {
  int stats_bytes = 4;      // element size of lse, max and denominator (2 reproduces the paper's counts)
  int partial_o_bytes = 0;  // element size of partial outputs and numerators as they travel (0: the workload's
                            // dtype, as FlashInfer keeps them; 4: fp32, as realrun's cpu backend sends them)
  std::optional<CollectiveAlgorithm> collective_algorithm;  // every collective by this algorithm (realrun's cpu
                                                            // backend runs rings); none: the fastest per phase
  int tree_fan_in_domain = 0;   // tree-lse: states merged per step inside a scale-up domain (0: all at once)
  int tree_fan_in_network = 2;  // tree-lse: across domains (2: binomial)
  bool ring_overlap = true;     // ring: a round's transfer runs beside its attention (false: after it, as on a CPU
                                // host, whose cores both compute and copy the blocks)
  TokenSplit split = TokenSplit::equal;  // how DecodeModel::plan shares the KV cache out (make_plan: shard_tokens)
  std::vector<long long> shard_tokens;   // tokens per rank, summing to the length; empty: split_tokens's equal split
  std::shared_ptr<const topologies::ImplProfile> impl;  // how the implementation runs it (none: the plan as is)
  bool gather_queries = false;  // decode context parallelism inside a TP group (vLLM's --dcp): an all-gather of the
                                // queries (q_bytes in all, the whole buffer) before the attention, on p > 1 ranks
};

// The plan as `profile` runs it: its extra work per layer goes before the algorithm's phases, in the profile's
// order (entries for other algorithms left out; a collective entry's host round trips follow it as a host
// phase); a first call becomes a host phase paid once; the plan's implementation fields are set; GQA K/V
// expansion multiplies kv_bytes_per_token by query_heads / kv_heads. An entry's bytes: kv_bytes x the largest
// shard's cached K and V + expanded_kv_bytes x the same expanded + bytes.
// Example: llama3.1-8b (32 query, 8 KV heads), 20,000 tokens on 2 GPUs, kv_expansion, an entry "RoPE" with
// kv_bytes 2.5: each shard caches 10,000 x 4 KiB = 40.96 MB per layer, so the entry moves 102.4 MB, and a ring
// block is 4 x 40.96 = 163.8 MB. Throws topologies::InputError (at the entry) for an unknown algorithm name.
void apply_impl(DecodePlan& plan, std::shared_ptr<const topologies::ImplProfile> profile);

// The kernels one rank launches per layer as the plan counts them: an attention 1; a ring pass or q-ring p rounds
// of attention and merge plus p - 1 sends; a collective 1; a transfers phase 1 (one NCCL group) and 1 more when it
// merges; a merge 1; an elementwise phase its kernels; and the layer's other kernels (other_kernels_per_layer).
// Example: tree (attention, three all-reduces, rescale and divide) under paper-torch-llama: 1 + 3 + 2 = 6, the
// profile's per-layer work 2 (cat) + 5 (RoPE) + 2 (repeat_kv) + 1 (broadcast) + 1 (barrier) = 11, and its 32
// other kernels: 49 (the last rank's count: it runs the cat).
int kernels_per_layer(const DecodePlan& plan);

// `domain_of_rank[r]` tells tree-lse which ranks share a scale-up domain. Throws std::invalid_argument for
// no GPUs, a sequence of fewer than 1 token, or an invalid workload.
DecodePlan make_plan(DecodeAlgorithm algorithm, const Workload& workload, long long seq_len, std::vector<int> gpus,
                     const std::vector<int>& domain_of_rank, const PlanOptions& options = {});

// `partial_o_bytes` 0: the workload's element size.
PlanSizes plan_sizes(const Workload& workload, int stats_bytes, int partial_o_bytes = 0);

// The plan as one GPU's own sequence of steps, for whoever executes it step by step (the simulator, the real
// run). Compute steps carry the bytes they read and their FLOPs; sends and receives their peer and bytes;
// collective steps the operation and size (their travel is the collective algorithm's business).
enum class StepKind { compute, send, receive, collective };
struct Step {
  StepKind kind = StepKind::compute;
  std::string label;
  int peer = -1;     // send / receive: the other rank
  double bytes = 0;  // compute: bytes read; send / receive / collective: bytes
  double flops = 0;  // compute
  CollectiveOp op = CollectiveOp::allreduce;
  bool overlaps_next = false;  // the ring's send runs while the next compute step does (double buffering); a
                               // ring send without it ends before the rank goes on (PlanOptions::ring_overlap)
  bool attention = false;      // compute: a flash-decoding kernel (none runs over an empty shard: flops 0)
  int phase = 0;               // index of the plan's phase it belongs to
  int round = -1;              // the ring's round (0 .. p-1) for the steps of its pass; -1 elsewhere
  int kernels = 1;             // compute: kernels launched (each pays the launch cost)
  double fixed_s = -1;         // compute: a fixed duration (host time), not bytes and FLOPs; < 0: none
};
std::vector<Step> steps_of(const DecodePlan& plan, int rank);
// The same, a piece at a time, for executors that should not hold a ring's p x 3 steps per rank: the steps of
// phase `phase` (all of a ring pass's rounds), or of one round of a ring pass. Appended to `steps`.
void append_phase_steps(const DecodePlan& plan, int rank, size_t phase, std::vector<Step>& steps);
void append_round_steps(const DecodePlan& plan, int rank, int round, std::vector<Step>& steps);
// Whether a phase of the plan has that role (PhaseRole::q_ring: its ring moves query blocks, pass-q's, not K/V).
bool has_phase(const DecodePlan& plan, PhaseRole role);
// The steps of transfers phase `phase` for every rank, as append_phase_steps gives them one rank at a time, in
// one pass over its sends (a rank at a time scans them all: p x sends, 5e8 for tree-lse on 16,384 GPUs).
std::vector<std::vector<Step>> transfers_phase_steps(const DecodePlan& plan, size_t phase);

// The bytes each rank sends over the whole plan, exactly, for plans whose collectives all run as rings (as
// realrun's cpu backend runs them): the ring's K/V blocks, tree-lse's transfers, and for a ring all-reduce of E
// elements the 2 (n-1) chunks a rank sends, the buffer cut into n chunks of whole elements, the first E mod n
// one element longer; a ring all-gather sends n - 1 of the n equal blocks. Throws std::invalid_argument for a
// collective that is not forced to run as a ring, or an all-reduce of mixed element sizes.
// Example: an all-reduce of 16 fp32 values on 3 ranks (chunks 6, 5, 5): rank 0 sends chunks 0, 2, then 1, 0:
// 22 values = 88 bytes; rank 1: 1, 0, 2, 1 = 21 values; rank 2: 2, 1, 0, 2 = 21 values.
std::vector<double> bytes_sent_per_rank(const DecodePlan& plan);

// The values of the output o ([b][n_h][d], as plan.hpp lays it out) that rank `rank` holds when the plan ends,
// as [first, first + count) spans: all of it where the output is replicated; its sequences' rows (pass-q); its
// heads of every sequence (a2a); chunk `rank` of the buffer cut as a ring reduce-scatter cuts it, the first
// E mod p chunks one value longer (ag-rs). Example: a2a, batch 2, 4 heads of dimension 8, 2 ranks: rank 1 holds
// values [16, 32) and [48, 64).
struct ValueSpan {
  long long first = 0;
  long long count = 0;
};
std::vector<ValueSpan> output_held(const DecodePlan& plan, int rank);

}  // namespace treering::model
