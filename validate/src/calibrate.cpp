#include "treering/validate/calibrate.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "treering/model/comm_group.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::validate {
namespace {

constexpr int kParameters = 3;  // tree base latency, NVLS-tree base latency, scale-out bandwidth

topologies::Calibration calibration_of(const Eigen::Vector3d& log_theta) {
  topologies::Calibration c;
  c.collectives["tree"].base_latency_s = std::exp(log_theta[0]);
  c.collectives["nvls-tree"].base_latency_s = std::exp(log_theta[1]);
  c.scale_out = topologies::TierCalibration{std::nullopt, std::exp(log_theta[2])};
  return c;
}

Eigen::VectorXd relative_errors(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured,
                                const Eigen::Vector3d& log_theta) {
  topologies::ClusterSpec spec = base;
  spec.calibration = calibration_of(log_theta);
  const std::vector<double> predicted = predict_collectives(spec, measured);
  Eigen::VectorXd r(static_cast<Eigen::Index>(measured.size()));
  for (size_t i = 0; i < measured.size(); ++i) r[static_cast<Eigen::Index>(i)] = (predicted[i] - measured[i].time_s) / measured[i].time_s;
  return r;
}

// Where the model starts: NCCL's tree/LL base (6.8 us), 1 us for NVLS-tree's (NCCL: 0), and the NICs' rate
// times the model's 0.92 efficiency.
Eigen::Vector3d starting_point(const topologies::ClusterSpec& base) {
  const double nic_Bps = base.groups.front().nics.count > 0 ? base.groups.front().nics.bandwidth_Bps : 50e9;
  return {std::log(6.8e-6), std::log(1e-6), std::log(nic_Bps * model::kScaleOutEfficiency)};
}

double squared(const Eigen::VectorXd& r) { return r.squaredNorm(); }

int levenberg_marquardt(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured,
                        Eigen::Vector3d& theta) {
  double lambda = 1e-2;
  Eigen::VectorXd r = relative_errors(base, measured, theta);
  int iteration = 0;
  for (; iteration < 100; ++iteration) {
    Eigen::MatrixXd jacobian(r.size(), kParameters);
    for (int p = 0; p < kParameters; ++p) {  // forward differences in log space
      Eigen::Vector3d step = theta;
      step[p] += 1e-4;
      jacobian.col(p) = (relative_errors(base, measured, step) - r) / 1e-4;
    }
    const Eigen::Matrix3d normal = jacobian.transpose() * jacobian;
    const Eigen::Vector3d gradient = jacobian.transpose() * r;
    bool improved = false;
    for (int attempt = 0; attempt < 10 && !improved; ++attempt) {
      Eigen::Matrix3d damped = normal;
      damped.diagonal() += lambda * normal.diagonal().cwiseMax(1e-12);
      const Eigen::Vector3d delta = damped.ldlt().solve(-gradient);
      const Eigen::Vector3d candidate = theta + delta.cwiseMax(-3.0).cwiseMin(3.0);  // at most e^3 per step
      const Eigen::VectorXd r_candidate = relative_errors(base, measured, candidate);
      if (squared(r_candidate) < squared(r)) {
        const double gain = (squared(r) - squared(r_candidate)) / std::max(squared(r), 1e-300);
        theta = candidate;
        r = r_candidate;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (gain < 1e-10) return iteration + 1;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  return iteration;
}

double median_abs(std::vector<double> values) {
  for (double& v : values) v = std::abs(v);
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

double max_abs(const std::vector<double>& values) {
  double worst = 0;
  for (double v : values) worst = std::max(worst, std::abs(v));
  return worst;
}

double log_r_squared(const std::vector<double>& predicted, const std::vector<CollectiveMeasurement>& measured) {
  double mean = 0;
  for (const auto& m : measured) mean += std::log(m.time_s) / static_cast<double>(measured.size());
  double residual = 0, total = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    residual += std::pow(std::log(predicted[i]) - std::log(measured[i].time_s), 2);
    total += std::pow(std::log(measured[i].time_s) - mean, 2);
  }
  return total > 0 ? std::clamp(1 - residual / total, 0.0, 1.0) : 0.0;
}

std::vector<double> to_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

}  // namespace

std::vector<double> predict_collectives(const topologies::ClusterSpec& spec, const std::vector<CollectiveMeasurement>& measured) {
  const topologies::Topology topology(spec);
  std::vector<double> times;
  std::map<int, model::CommGroup> groups;  // by ranks
  for (const CollectiveMeasurement& m : measured) {
    if (m.ranks > topology.gpu_count()) {
      throw std::invalid_argument(m.file + ": " + std::to_string(m.ranks) + " ranks, the cluster has " +
                                  std::to_string(topology.gpu_count()) + " GPUs (try --nodes)");
    }
    auto group = groups.find(m.ranks);
    if (group == groups.end()) {
      std::vector<int> gpus(static_cast<size_t>(m.ranks));
      std::iota(gpus.begin(), gpus.end(), 0);
      group = groups.emplace(m.ranks, model::describe_group(topology, gpus)).first;
    }
    model::CollectiveRequest request;
    request.op = m.op;
    request.bytes = m.bytes;
    request.algorithm = m.algorithm;  // what ran, when known (else NCCL's pick)
    if (m.algorithm) request.allowed = model::AlgorithmSet::all;
    times.push_back(model::estimate_collective(group->second, request).chosen.time_s);
  }
  return times;
}

CalibrationFit calibrate_collectives(const topologies::ClusterSpec& base, const std::vector<CollectiveMeasurement>& measured,
                                     const std::vector<std::string>& inputs, const std::string& date) {
  if (measured.size() < kParameters) throw std::invalid_argument("calibration needs at least 3 measurements");
  CalibrationFit fit;
  topologies::ClusterSpec uncalibrated = base;
  uncalibrated.calibration.reset();
  const std::vector<double> before = predict_collectives(uncalibrated, measured);
  for (size_t i = 0; i < measured.size(); ++i) fit.rel_errors_before.push_back((before[i] - measured[i].time_s) / measured[i].time_s);
  Eigen::Vector3d theta = starting_point(base);
  fit.iterations = levenberg_marquardt(base, measured, theta);
  fit.calibration = calibration_of(theta);
  fit.rel_errors_after = to_vector(relative_errors(base, measured, theta));
  topologies::ClusterSpec calibrated = base;
  calibrated.calibration = fit.calibration;
  topologies::CalibrationProvenance& p = fit.calibration.provenance;
  p.inputs = inputs;
  p.date = date;
  p.tool = "treering calibrate";
  p.r_squared = log_r_squared(predict_collectives(calibrated, measured), measured);
  p.median_abs_rel_error = median_abs(fit.rel_errors_after);
  p.max_abs_rel_error = max_abs(fit.rel_errors_after);
  auto [smallest, largest] = std::minmax_element(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  auto [fewest, most] = std::minmax_element(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.ranks < b.ranks; });
  p.sizes_bytes = std::pair{smallest->bytes, largest->bytes};
  p.ranks = std::pair{fewest->ranks, most->ranks};
  return fit;
}

}  // namespace treering::validate
