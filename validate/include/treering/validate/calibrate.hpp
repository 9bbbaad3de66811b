// Fitting a cluster's model to measured collectives: the all-reduce's latency terms and the network's
// bandwidth, by Levenberg-Marquardt on the relative errors (so that 8 B and 8 GB count alike), Eigen for the
// linear algebra. The fitted values become the cluster file's `calibration:` section, with their provenance.
//
// Parameters (positive; fitted in log space): across scale-up domains, the tree row's base latency (small
// all-reduces), the NVLS-tree row's base latency and the scale-out tier's bandwidth per NIC (large ones); inside
// one domain, the ring's base latency and the scale-up tier's step latency and bus bandwidth. Others keep
// their defaults. The
// fit minimises sum_i ((t_model,i - t_i) / t_i)^2. R^2 is that of log times: 1 - sum (ln t_model - ln t)^2 /
// sum (ln t - mean ln t)^2.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/validate/measurements.hpp"

namespace treering::validate {

struct CalibrationFit {
  topologies::Calibration calibration;  // with provenance filled in (inputs, date, tool, R^2, errors)
  std::vector<double> rel_errors_before, rel_errors_after;  // per measurement
  std::vector<std::pair<std::string, double>> fitted;       // parameter name -> value (seconds, bytes/s)
  int iterations = 0;
};

// `base`: the cluster (node counts applied) the measurements ran on. Throws std::invalid_argument with fewer
// than 3 measurements, or ranks beyond the cluster's GPUs.
CalibrationFit calibrate_collectives(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured,
                                     const std::vector<std::string>& inputs, const std::string& date);

// The model's time for each measurement on `spec` (its calibration applied), the ranks on GPUs 0 .. n-1.
std::vector<double> predict_collectives(const topologies::ClusterSpec& spec, const std::vector<CollectiveMeasurement>& measured);

// Why a prediction of `bytes` over `ranks` on a cluster calibrated as `calibration` is an extrapolation (outside
// the sizes or ranks its measurements covered), or "" when it is not (or nothing says).
std::string extrapolation(const topologies::Calibration& calibration, double bytes, int ranks);

// `base_yaml` with its top-level `calibration:` block (if any) replaced by `calibration`'s.
std::string with_calibration(const std::string& base_yaml, const topologies::Calibration& calibration);

}  // namespace treering::validate
