#include "treering/validate/attention_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "treering/model/attention_kernel.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {
namespace {

struct KernelPoint {  // one measurement, as the fit sees it
  double chunks = 0, bytes = 0, time_s = 0;
  long long tokens = 0;
  std::string workload;
};

struct Solution {
  Eigen::Vector3d theta = Eigen::Vector3d::Zero();  // fixed_s, split_s, 1 / bandwidth
  std::vector<int> free;                            // the columns fitted
  double rss = 0;
};

// Relative least squares over the columns `free` (the others held at 0); `free` comes back empty when singular.
Solution solve(const Eigen::MatrixXd& a, const std::vector<int>& free) {
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(free.size()));
  for (size_t j = 0; j < free.size(); ++j) sub.col(static_cast<Eigen::Index>(j)) = a.col(free[j]);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(a.rows());
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(sub);
  Solution s;
  if (qr.rank() < static_cast<Eigen::Index>(free.size())) return s;
  const Eigen::VectorXd x = qr.solve(ones);
  for (size_t j = 0; j < free.size(); ++j) s.theta[free[j]] = x[static_cast<Eigen::Index>(j)];
  s.free = free;
  s.rss = (sub * x - ones).squaredNorm();
  return s;
}

// The best fit with fixed >= 0, split >= 0 and 1 / bandwidth > 0: every choice of bounds held at 0, feasible ones kept.
Solution constrained_fit(const Eigen::MatrixXd& a) {
  Solution best;
  bool found = false;
  for (const std::vector<int>& free : {std::vector<int>{0, 1, 2}, {0, 2}, {1, 2}, {2}}) {
    const Solution s = solve(a, free);
    if (s.free.empty() || s.theta[0] < 0 || s.theta[1] < 0 || s.theta[2] <= 0) continue;
    if (!found || s.rss < best.rss - 1e-15) best = s, found = true;
  }
  if (!found) throw topologies::InputError("the attention points give no positive bandwidth");
  return best;
}

// Standard errors from the relative residuals: sigma^2 (A' A)^-1 over the free columns, sigma^2 = rss / (n - p).
void standard_errors(const Eigen::MatrixXd& a, const Solution& s, AttentionShapeFit& fit) {
  const auto p = static_cast<Eigen::Index>(s.free.size());
  if (a.rows() <= p) return;
  Eigen::MatrixXd sub(a.rows(), p);
  for (Eigen::Index j = 0; j < p; ++j) sub.col(j) = a.col(s.free[static_cast<size_t>(j)]);
  const Eigen::MatrixXd covariance = (sub.transpose() * sub).inverse() * (s.rss / static_cast<double>(a.rows() - p));
  for (Eigen::Index j = 0; j < p; ++j) {
    const double error = std::sqrt(std::max(0.0, covariance(j, j)));
    const int column = s.free[static_cast<size_t>(j)];
    if (column == 0) fit.fixed_error_s = error;
    if (column == 1) fit.split_error_s = error;
    if (column == 2) fit.bandwidth_error_Bps = error / (s.theta[2] * s.theta[2]);  // d(1/x) = dx / x^2
  }
}

AttentionShapeFit fit_shape(int head_dim, int group, const std::vector<KernelPoint>& points) {
  std::set<long long> distinct;
  for (const KernelPoint& p : points) distinct.insert(p.tokens);
  if (distinct.size() < 2) {
    throw topologies::InputError("attention of head dim " + std::to_string(head_dim) + ", group " +
                                 std::to_string(group) + " needs at least 2 different token counts to fit");
  }
  Eigen::MatrixXd a(static_cast<Eigen::Index>(points.size()), 3);
  for (size_t i = 0; i < points.size(); ++i) {
    const KernelPoint& p = points[i];
    a.row(static_cast<Eigen::Index>(i)) << 1.0 / p.time_s, p.chunks / p.time_s, p.bytes / p.time_s;
  }
  const Solution s = constrained_fit(a);
  AttentionShapeFit fit;
  fit.line = {head_dim, group, s.theta[0], s.theta[1], 1.0 / s.theta[2]};
  fit.points = static_cast<int>(points.size());
  fit.tokens = {*distinct.begin(), *distinct.rbegin()};
  fit.chunks = {1 << 30, 0};
  for (const KernelPoint& p : points) {
    const double model_s = s.theta[0] + s.theta[1] * p.chunks + s.theta[2] * p.bytes;
    fit.rel_errors.push_back((model_s - p.time_s) / p.time_s);
    fit.chunks = {std::min(fit.chunks.first, static_cast<int>(p.chunks)),
                  std::max(fit.chunks.second, static_cast<int>(p.chunks))};
    if (std::find(fit.workloads.begin(), fit.workloads.end(), p.workload) == fit.workloads.end())
      fit.workloads.push_back(p.workload);
  }
  std::vector<double> magnitudes;
  for (double e : fit.rel_errors) magnitudes.push_back(std::abs(e));
  fit.median_abs_rel_error = model::median(magnitudes);
  fit.max_abs_rel_error = *std::max_element(magnitudes.begin(), magnitudes.end());
  standard_errors(a, s, fit);
  return fit;
}

}  // namespace

std::vector<AttentionShapeFit> fit_attention_shapes(const topologies::ClusterSpec& spec,
                                                    const std::vector<AttentionMeasurement>& measured) {
  const topologies::GpuModel& gpu = spec.gpu_models.at(spec.groups.front().gpu_model);
  if (gpu.multiprocessors < 1) {
    throw topologies::InputError("fitting attention by shape needs the GPU's multiprocessors: gpu model '" + gpu.name +
                                 "' has no 'multiprocessors' (set it in the cluster file or with --set)");
  }
  std::map<std::pair<int, int>, std::vector<KernelPoint>> by_shape;
  for (const AttentionMeasurement& m : measured) {
    const model::Workload& w = model::find_workload(m.workload);
    const model::SplitKvShape shape = model::split_kv_shape(w);
    const double chunks = model::split_kv_chunks(shape, gpu.multiprocessors, m.tokens);
    // The bytes the model counts for one kernel (realrun's plans: fp32 partial o and lse).
    const double bytes = model::attention_bytes(model::plan_sizes(w, 4, 4), m.tokens);
    by_shape[{w.head_dim, shape.group}].push_back({chunks, bytes, m.time_s, m.tokens, m.workload});
  }
  std::vector<AttentionShapeFit> fits;
  for (const auto& [shape, points] : by_shape) fits.push_back(fit_shape(shape.first, shape.second, points));
  return fits;
}

double predict_attention_s(const topologies::ClusterSpec& calibrated, const AttentionMeasurement& measurement) {
  const model::Workload& workload = model::find_workload(measurement.workload);
  const topologies::Topology topology(calibrated);
  const model::ComputeRates rates = model::compute_rates(topology, 0);
  return model::attention_time_s(rates, workload, model::plan_sizes(workload, 4, 4), measurement.tokens);
}

}  // namespace treering::validate
