// GPU compute time of the decode kernels. Flash-decoding is memory-bound: it reads the shard's K and V once.
//   time = launch overhead + max(bytes moved / (HBM bandwidth x efficiency), FLOPs / peak 16-bit FLOP/s)
// unless the cluster's calibration measured the kernel's shape (head dim, group; calibration `attention:`), then
//   time = fixed + split per chunk x chunks + bytes moved / the shape's bandwidth   (attention_kernel.hpp's chunks)
// bytes moved = tokens x K/V bytes per token + q + o + lse; FLOPs = 4 x b x n_h x d_h x tokens (q.K and p.V).
// Example: 64,000 tokens of paper-mha16 on an H100 (3.35 TB/s x 0.80, 3 us launch): 64,000 x 8 KiB =
// 524 MB -> 524.3e6 / 2.68e12 = 195.6 us + 3 us; FLOPs 4 x 16 x 128 x 64,000 = 524 MFLOP, 0.53 us at 989 TFLOP/s.
#pragma once

#include <array>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::model {

// Latent attention (workload.hpp) runs absorbed, FlashMLA-style: one latent head of 576 values read per token for all
// the GPU's query heads, 2 x b x n_h x tokens x (576 + 512) FLOPs, about 2 x n_h FLOPs a byte: memory-bound with few
// heads a GPU, compute-bound from about 128 (H800). Uncalibrated, its kernel reaches what FlashMLA publishes for an
// H800 SXM5 (deepseek-ai/FlashMLA README: "up to 3000 GB/s in memory-bound configuration"; its 2025-04-22 update:
// "up to 660 TFlops"), over that GPU's rated 3.35 TB/s and 990 TFLOP/s: 0.896 and 0.667.
// Example (deepseek-v3 at tp 8 on an H200, 4.8 TB/s, 989 TFLOP/s: 16 heads, b = 1, 128k tokens): 151 MB read ->
// 35.1 us; 4.56 GFLOP -> 6.9 us: memory-bound. With dcp 8 (128 heads, 16k tokens): 18.9 MB -> 4.4 us; the same
// 4.56 GFLOP -> 6.9 us: compute-bound.
constexpr double kLatentAttentionHbmEfficiency = 3000.0 / 3350.0;
constexpr double kLatentAttentionFlopEfficiency = 660.0 / 990.0;

// FLOPs of one decode attention over `tokens`: 2 x b x n_h x tokens x (key width + value width) (q.K and p.V).
// Example: llama3.1-8b, b = 1, 1,000 tokens: 2 x 32 x 1,000 x 256 = 16.4 MFLOP.
double attention_flops(const Workload& workload, long long tokens);

// Achieved HBM bandwidth of split-KV decode kernels over the datasheet figure, unless calibrated
// (calibration.compute.hbm_efficiency). FlashInfer and FlashDecoding report 70-90 % of peak for long contexts;
// 0.80 is the middle.
constexpr double kDefaultHbmEfficiency = 0.80;

struct ComputeRates {
  double hbm_Bps = 0;  // effective
  double peak_flops = 0;
  double launch_s = 0;
  double hbm_capacity_bytes = 0;
  double hbm_rated_Bps = 0;  // the GPU model's rated bandwidth (the step calibration's efficiencies are over it)
  std::array<topologies::StepPartCalibration, topologies::kStepCalibrationPartCount> step{};  // the calibration's
  std::vector<topologies::StepAttentionShape> step_attention_shapes;                          // ... and by shape
  int multiprocessors = 0;                                              // the GPU's SMs (0: unknown)
  std::vector<topologies::AttentionShapeCalibration> attention_shapes;  // a decode's attention, by kernel shape
};

// The bandwidth and FLOP rate an attention kernel of `workload` reaches uncalibrated: latent attention's at FlashMLA's
// efficiencies over the rated figures (above), any other at the rates' own (hbm_Bps, peak_flops).
struct KernelRates {
  double hbm_Bps = 0;
  double peak_flops = 0;
};
KernelRates attention_kernel_rates(const ComputeRates& rates, const Workload& workload);

// The entry of `shapes` for the workload's kernel shape (head dim, query heads per KV head), or null.
const topologies::AttentionShapeCalibration* find_attention_shape(
    const std::vector<topologies::AttentionShapeCalibration>& shapes, const Workload& workload);

// Bytes one attention call moves: tokens x K/V bytes per token + q + o + lse, plus `extra_bytes`.
// Example: llama3.1-8b (one layer), 16,000 tokens, fp32 o and lse: 16,000 x 4,096 + 8,192 + 16,384 + 128 = 65,560,704
// B.
double attention_bytes(const PlanSizes& sizes, long long tokens, double extra_bytes = 0);

// The rates of one GPU, from its model and the cluster's calibration.
ComputeRates compute_rates(const topologies::Topology& topology, int gpu);

// Attention of q against `tokens` cached tokens, with `extra_bytes` more moved (a fused merge of states).
// No tokens: no kernel, zero time.
double attention_time_s(const ComputeRates& rates, const Workload& workload, const PlanSizes& sizes, long long tokens,
                        double extra_bytes = 0);

// Tokens per rank, summing to `tokens`, that minimise the slowest rank's attention_time_s: each rank gets the
// most tokens it can attend to within a common time T, the smallest T whose shares add up to the length, then
// the surplus is taken from the ranks that would finish last. Equal rates give the equal split's counts.
// Example: an H100 (3.35 TB/s) and an H200 (4.8 TB/s) at the same efficiency and launch overhead share 1M
// tokens about 411k : 589k (in proportion to 3.35 : 4.8).
std::vector<long long> split_by_speed(long long tokens, const std::vector<ComputeRates>& rates,
                                      const Workload& workload, const PlanSizes& sizes);

// A small memory-bound kernel touching `bytes`.
double kernel_time_s(const ComputeRates& rates, double bytes);

// The rates a plan's kernels run at: the GPU's, with the implementation's launch cost when it sets one
// (DecodePlan::kernel_launch_s). The model and the simulator both time kernels with these.
ComputeRates plan_rates(const ComputeRates& rates, const DecodePlan& plan);

}  // namespace treering::model
