// A cost that changes character with the message size: up to a few latency-bandwidth lines, each over a
// contiguous range of sizes (a band), where one line cannot follow the measurements across a knee (a host's
// caches, a protocol switch, an eager/rendezvous threshold).
//
// Each band's line minimises sum ((alpha + n_i / B - t_i) / t_i)^2 over its measurements (relative errors, so
// that 8 B and 8 MB count alike), with alpha >= 0 and B > 0; a band needs two different sizes. The number of
// bands is the one with the lowest Bayesian information criterion,
//   BIC(K) = n ln(RSS_K / n) + (3K - 1) ln n    (K lines of 2 parameters, K - 1 knees),
// RSS floored at n x (1e-3)^2 (timings are not more exact than 0.1 %), ties to fewer bands. A knee between the
// largest size of one band and the smallest of the next is placed at their geometric mean.
// Example: 1, 2, 4 MiB at 10 us + n / 10 GB/s and 16, 32, 64 MiB at 50 us + n / 4 GB/s: one line leaves
// errors of tens of percent, two lines none, so two bands: {0: 10 us, 10 GB/s}, {8 MiB: 50 us, 4 GB/s}.
#pragma once

#include <vector>

#include "treering/topologies/cluster.hpp"

namespace treering::validate {

struct BandedFit {
  std::vector<topologies::SizeBand> bands;
  std::vector<double> rel_errors;  // (fitted - measured) / measured, per measurement in the order given
  double median_abs_rel_error = 0;
  double max_abs_rel_error = 0;
};

// Throws std::invalid_argument when sizes and times differ in length, a time is not positive and finite, fewer
// than two different sizes are given, or no line with a positive bandwidth fits (times that do not grow).
BandedFit fit_size_bands(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s, int max_bands = 3);

}  // namespace treering::validate
