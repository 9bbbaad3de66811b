// Fitting t(n) = alpha + n / bandwidth to measured (message size, time) pairs by least squares weighted
// by relative error, so that small latency-bound messages count as much as large bandwidth-bound ones.
#pragma once

#include <vector>

namespace treering::validate {

struct LatencyBandwidthFit {
  double latency_s = 0;      // alpha
  double bandwidth_Bps = 0;  // 1 / beta
  double r_squared = 0;      // of the weighted fit, in relative terms
  double max_abs_rel_error = 0;
};

// Minimises sum_i ((alpha + beta * n_i - t_i) / t_i)^2 over alpha, beta. Needs at least two distinct
// sizes and positive times; throws std::invalid_argument otherwise, or when the fit gives a
// non-positive bandwidth (the times do not grow with size).
LatencyBandwidthFit fit_latency_bandwidth(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s);

}  // namespace treering::validate
