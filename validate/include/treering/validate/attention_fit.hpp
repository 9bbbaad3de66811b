// Fitting the split-KV attention kernel per shape (head dim, query heads per KV head) to `treering-realrun bench
// attention` files: time = fixed + split x chunks + bytes / bandwidth, where chunks is the kernel's split of the shard
// (model/attention_kernel.hpp, from the GPU's multiprocessors) and bytes what the model says one call reads. Linear
// in (fixed, split, 1 / bandwidth): minimise sum ((fixed + split c_i + x b_i - t_i) / t_i)^2 so that every point's
// relative error counts alike, with fixed >= 0 and split >= 0 (a bound that binds is held at 0 and the rest refitted).
// Example (H100, llama3.1-8b's shape): 1k, 16k and 128k tokens (15, 33, 33 chunks; 17.2, 46.5, 220.0 us) give fixed
// 11.5 us, split 0.31 us a chunk, 2.63 TB/s.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/validate/compute_fit.hpp"

namespace treering::validate {

struct AttentionShapeFit {
  topologies::AttentionShapeCalibration line;
  std::vector<std::string> workloads;  // the measured workloads of this shape
  int points = 0;
  std::pair<long long, long long> tokens;  // fewest, most measured
  std::pair<int, int> chunks;              // fewest, most chunks the points ran
  // Standard errors of the three parameters (from the residuals and the fit's normal matrix); negative when the
  // points leave none to estimate it (as many points as free parameters) or the parameter was held at 0.
  double fixed_error_s = -1, split_error_s = -1, bandwidth_error_Bps = -1;
  double median_abs_rel_error = 0, max_abs_rel_error = 0;
  std::vector<double> rel_errors;  // (model - measured) / measured, in the measurements' order
};

// One fit per shape, shapes in order of (head dim, group). Throws std::invalid_argument when the GPU model has no
// multiprocessors, a shape has fewer than 2 distinct token counts, or its bandwidth comes out non-positive.
std::vector<AttentionShapeFit> fit_attention_shapes(const topologies::ClusterSpec& spec,
                                                    const std::vector<AttentionMeasurement>& measured);

// The model's time for one measurement with the calibrated shapes (the model's prior where its shape is missing).
double predict_attention_s(const topologies::ClusterSpec& calibrated, const AttentionMeasurement& measurement);

}  // namespace treering::validate
