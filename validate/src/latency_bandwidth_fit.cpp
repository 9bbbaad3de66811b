#include "treering/validate/latency_bandwidth_fit.hpp"
#include "treering/topologies/input_error.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace treering::validate {

LatencyBandwidthFit fit_latency_bandwidth(const std::vector<double>& sizes_bytes, const std::vector<double>& times_s) {
  if (sizes_bytes.size() != times_s.size()) throw std::logic_error("sizes and times differ in length");
  const Eigen::Index count = static_cast<Eigen::Index>(sizes_bytes.size());
  if (count < 2) throw topologies::InputError("a latency-bandwidth fit needs at least two measurements");
  if (std::all_of(sizes_bytes.begin(), sizes_bytes.end(), [&](double n) { return n == sizes_bytes.front(); })) {
    throw topologies::InputError("a latency-bandwidth fit needs at least two different sizes");
  }
  // Dividing each row by t_i turns the relative residual into an ordinary one:
  // [1/t_i, n_i/t_i] . [alpha, beta] ~= 1.
  Eigen::MatrixXd design(count, 2);
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(count);
  for (Eigen::Index i = 0; i < count; ++i) {
    const double time_s = times_s[static_cast<size_t>(i)];
    if (!(time_s > 0) || !std::isfinite(time_s)) throw topologies::InputError("measured times must be positive");
    design(i, 0) = 1.0 / time_s;
    design(i, 1) = sizes_bytes[static_cast<size_t>(i)] / time_s;
  }
  Eigen::Vector2d solution = design.colPivHouseholderQr().solve(ones);
  if (!(solution(1) > 0)) throw topologies::InputError("the fitted bandwidth is not positive");
  LatencyBandwidthFit fit;
  fit.latency_s = solution(0);
  fit.bandwidth_Bps = 1.0 / solution(1);
  Eigen::VectorXd residual = design * solution - ones;  // relative errors
  fit.max_abs_rel_error = residual.cwiseAbs().maxCoeff();
  // R^2 of the predicted times against the measured ones: 1 - SS_res / SS_tot.
  double mean_s = 0;
  for (double time_s : times_s) mean_s += time_s / static_cast<double>(count);
  double residual_ss = 0;
  double total_ss = 0;
  for (Eigen::Index i = 0; i < count; ++i) {
    const double time_s = times_s[static_cast<size_t>(i)];
    const double predicted_s = fit.latency_s + sizes_bytes[static_cast<size_t>(i)] / fit.bandwidth_Bps;
    residual_ss += (time_s - predicted_s) * (time_s - predicted_s);
    total_ss += (time_s - mean_s) * (time_s - mean_s);
  }
  fit.r_squared = total_ss > 0 ? 1.0 - residual_ss / total_ss : 1.0;
  return fit;
}

}  // namespace treering::validate
