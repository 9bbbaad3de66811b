// Fitting a cluster's model to measured collectives: the all-reduce's latency terms and the network's
// bandwidth, by Levenberg-Marquardt on the relative errors (so that 8 B and 8 GB count alike), Eigen for the
// linear algebra. The fitted values become the cluster file's `calibration:` section, with their provenance.
// Across domains each fitted latency stays at or above NCCL's own figure for it (a cited floor, never 0); a
// parameter whose fit gives a larger median |error| than its prior is left at its prior, and the provenance says so.
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

#include "treering/topologies/calibration_yaml.hpp"
#include "treering/topologies/cluster.hpp"
#include "treering/validate/measurements.hpp"

namespace treering::validate {

// A parameter the data did not favour over its prior: with the prior (NCCL's or the preset's figure) and the
// other parameters fitted, the median |error| over the measurements was smaller than with it fitted.
struct KeptPrior {
  std::string name;
  double fitted = 0;                           // what the fit had set (seconds, bytes/s)
  double median_fitted = 0, median_prior = 0;  // median |error| with it fitted, with its prior
};
// "nvls-tree base latency: the prior kept (fitted 0.6 us: median |error| 3.7 %, 3.6 % with the prior)".
std::string describe(const KeptPrior& kept);

struct CalibrationFit {
  topologies::Calibration calibration;  // with provenance filled in (inputs, date, tool, R^2, errors)
  std::vector<double> rel_errors_before, rel_errors_after;  // per measurement
  std::vector<std::pair<std::string, double>> fitted;       // parameter name -> value (seconds, bytes/s)
  std::vector<KeptPrior> kept_priors;                       // left at their priors (provenance.kept_priors says so)
  int iterations = 0;
};

// `base`: the cluster (node counts applied) the measurements ran on. Throws std::invalid_argument with fewer
// than 3 measurements, or ranks beyond the cluster's GPUs.
CalibrationFit calibrate_collectives(const topologies::ClusterSpec& base,
                                     const std::vector<CollectiveMeasurement>& measured,
                                     const std::vector<std::string>& inputs, const std::string& date);

// The model's time for each measurement on `spec` (its calibration applied), the ranks on GPUs 0 .. n-1.
std::vector<double> predict_collectives(const topologies::ClusterSpec& spec,
                                        const std::vector<CollectiveMeasurement>& measured);

// Why a prediction of `bytes` over `ranks` on a cluster calibrated as `calibration` is an extrapolation (outside
// the sizes or ranks its measurements covered), or "" when it is not (or nothing says).
std::string extrapolation(const topologies::Calibration& calibration, double bytes, int ranks);

// `base_yaml` with its top-level `calibration:` block (if any) replaced by `calibration`'s: written in topologies,
// next to the section's reader.
using topologies::with_calibration;

}  // namespace treering::validate
