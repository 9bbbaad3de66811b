#include "treering/validate/calibrate.hpp"

#include "treering/validate/report.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "treering/model/comm_group.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {
namespace {

topologies::TierCalibration& tier(std::optional<topologies::TierCalibration>& slot) {
  if (!slot) slot = topologies::TierCalibration{};
  return *slot;
}

// A fitted quantity: its name, where the fit starts, the least value it may take, and where its value goes in
// the calibration. Left out of the calibration, the model keeps its prior (NCCL's or the preset's figure).
struct Parameter {
  const char* name;
  double start;
  double floor;
  void (*set)(topologies::Calibration&, double);
};

// No rate below 1 B/s (a bandwidth's floor; the fit never nears it).
constexpr double kBandwidthFloor_Bps = 1.0;
// Inside one domain the measurements need not be NCCL's (the calibration loop times MPI-like rings between CPU
// processes: 0.5 us in all), so NCCL's figures are no floor there; 1 ns keeps the logarithm finite.
constexpr double kInDomainLatencyFloor_s = 1e-9;

double least_finite(const std::array<double, model::kProtocols>& cells) {
  double least = std::numeric_limits<double>::infinity();
  for (double cell : cells) {
    if (std::isfinite(cell)) least = std::min(least, cell);
  }
  return least;
}

// The least physical value of a latency the fit sets across domains, where NCCL's tuning rows are what it fits:
// NCCL's own figure for it (src/graph/tuning.cc, the smallest over its protocols: the tree row's base 6.8 us;
// model::nccl_latency_defaults), and never below one step over the fastest link of the cluster's fabric (NCCL's
// least hardware latency there, 0.6 us on NVLink), which also floors the rows whose base NCCL sets to 0
// (NVLS-tree: its fixed cost is all hardware latency).
struct LatencyFloors {
  double tree_base_s, nvls_tree_base_s;
};
LatencyFloors latency_floors(const topologies::ClusterSpec& base) {
  const bool pcie = base.groups.front().fabric.type == topologies::FabricType::pcie;
  const model::LatencyTable nccl = model::nccl_latency_defaults(pcie, base.nccl_version);
  const auto row = [](model::LatencyRow r) { return static_cast<size_t>(r); };
  const double step_s = least_finite(nccl.scale_up_step[row(model::LatencyRow::ring)]);
  return {std::max(step_s, least_finite(nccl.base[row(model::LatencyRow::tree)])),
          std::max(step_s, least_finite(nccl.base[row(model::LatencyRow::nvls_tree)]))};
}

// Across scale-up domains: the tree's base latency (small all-reduces), NVLS-tree's (large ones; NCCL: 0, the
// fit starts at its floor), the NICs' rate and the LL and LL128 protocols' bus bandwidth caps (mid sizes). Inside one
// domain: the ring's base latency, the fabric's step latency and its bus rate. Starting points: NCCL's LL bases (6.8
// and 6.6 us), the fabric's latency, and the rated figures times the model's efficiencies.
std::vector<Parameter> parameters_for(const topologies::ClusterSpec& base,
                                      const std::vector<CollectiveMeasurement>& measured) {
  int most = 0;
  for (const CollectiveMeasurement& m : measured) most = std::max(most, m.ranks);
  const topologies::NodeGroup& group = base.groups.front();
  const LatencyFloors floors = latency_floors(base);
  if (most <= group.gpus_per_node * std::max(1, group.fabric.domain_nodes)) {
    const double bus_Bps = group.fabric.type == topologies::FabricType::mesh
                               ? group.fabric.link_bandwidth_Bps * (group.gpus_per_node - 1)
                               : group.fabric.bandwidth_Bps;
    return {{"ring base latency", 6.6e-6, kInDomainLatencyFloor_s,
             [](topologies::Calibration& c, double v) { c.collectives["ring"].base_latency_s = v; }},
            {"scale-up step latency", std::max(group.fabric.latency_s, 1e-7), kInDomainLatencyFloor_s,
             [](topologies::Calibration& c, double v) { tier(c.scale_up).latency_s = v; }},
            {"scale-up bus bandwidth", std::max(bus_Bps, 1e9) * model::kScaleUpEfficiency, kBandwidthFloor_Bps,
             [](topologies::Calibration& c, double v) { tier(c.scale_up).bandwidth_Bps = v; }}};
  }
  // Across domains also NCCL's protocol caps (model::NcclChannels), from NCCL's own figures for the cluster's GPUs
  // and hosts: on 2 x DGX H100, LL 39 GB/s, LL128 8 x 36.7 GB/s (one search channel per NIC).
  const double nic_Bps = group.nics.count > 0 ? group.nics.bandwidth_Bps : 50e9;
  const int domain_gpus = group.gpus_per_node * std::max(1, group.fabric.domain_nodes);
  const int domains = std::max(2, (most + domain_gpus - 1) / domain_gpus);
  const model::NcclChannels caps =
      model::nccl_channels({domains, std::max(1, group.nics.count), group.nics.bandwidth_Bps, group.gpus_per_node},
                           model::nccl_rows_of(base), base.nccl_version);
  const double ll_start_Bps = caps.ll_max_bus_Bps;
  const double ll128_start_Bps = caps.ll128_bus_Bps;
  std::vector<Parameter> across{
      {"tree base latency", std::max(6.8e-6, floors.tree_base_s), floors.tree_base_s,
       [](topologies::Calibration& c, double v) { c.collectives["tree"].base_latency_s = v; }},
      {"nvls-tree base latency", floors.nvls_tree_base_s, floors.nvls_tree_base_s,
       [](topologies::Calibration& c, double v) { c.collectives["nvls-tree"].base_latency_s = v; }},
      {"scale-out bandwidth per NIC", nic_Bps * model::kScaleOutEfficiency, kBandwidthFloor_Bps,
       [](topologies::Calibration& c, double v) { tier(c.scale_out).bandwidth_Bps = v; }},
      {"LL bus bandwidth", ll_start_Bps, kBandwidthFloor_Bps,
       [](topologies::Calibration& c, double v) { c.ll_bus_Bps = v; }},
      {"LL128 bus bandwidth", ll128_start_Bps, kBandwidthFloor_Bps,
       [](topologies::Calibration& c, double v) { c.ll128_bus_Bps = v; }}};
  // With in-switch reduction, NVLS-tree's large all-reduces run at the switch's reduction rate on two nodes
  // (2 (k-1)/k of the data crosses the NICs: 8 x 46 GB/s there against 450 x 0.60 = 270 GB/s in the switch).
  if (group.fabric.in_switch_reduction) {
    across.push_back({"in-switch bandwidth", group.fabric.bandwidth_Bps * model::kInSwitchEfficiency,
                      kBandwidthFloor_Bps, [](topologies::Calibration& c, double v) { c.in_switch_Bps = v; }});
  }
  return across;
}

// A tier's calibration needs its bandwidth: where the scale-up step latency is fitted and the bus bandwidth kept at
// its prior, the tier takes the prior's figure (the rated bus bandwidth x the model's efficiency, the fit's start).
topologies::Calibration calibration_of(const std::vector<Parameter>& parameters, const Eigen::VectorXd& log_theta,
                                       const std::vector<Parameter>& left = {}) {
  topologies::Calibration c;
  for (size_t i = 0; i < parameters.size(); ++i)
    parameters[i].set(c, std::exp(log_theta[static_cast<Eigen::Index>(i)]));
  for (const Parameter& p : left) {
    if (std::string(p.name) == "scale-up bus bandwidth" && c.scale_up && c.scale_up->bandwidth_Bps <= 0)
      p.set(c, p.start);
  }
  return c;
}

struct Problem {
  const topologies::ClusterSpec& base;
  const std::vector<CollectiveMeasurement>& measured;
  std::vector<Parameter> parameters;
  std::vector<Parameter> left = {};  // kept at their priors
  Eigen::VectorXd log_floors() const {
    Eigen::VectorXd floors(static_cast<Eigen::Index>(parameters.size()));
    for (size_t i = 0; i < parameters.size(); ++i) floors[static_cast<Eigen::Index>(i)] = std::log(parameters[i].floor);
    return floors;
  }
  Eigen::VectorXd relative_errors(const Eigen::VectorXd& log_theta) const {
    topologies::ClusterSpec spec = base;
    spec.calibration = calibration_of(parameters, log_theta, left);
    const std::vector<double> predicted = predict_collectives(spec, measured);
    Eigen::VectorXd r(static_cast<Eigen::Index>(measured.size()));
    for (size_t i = 0; i < measured.size(); ++i)
      r[static_cast<Eigen::Index>(i)] = (predicted[i] - measured[i].time_s) / measured[i].time_s;
    return r;
  }
};

double squared(const Eigen::VectorXd& r) { return r.squaredNorm(); }

int levenberg_marquardt(const Problem& problem, Eigen::VectorXd& theta) {
  const Eigen::Index n = theta.size();
  double lambda = 1e-2;
  Eigen::VectorXd r = problem.relative_errors(theta);
  int iteration = 0;
  for (; iteration < 100; ++iteration) {
    Eigen::MatrixXd jacobian(r.size(), n);
    for (Eigen::Index p = 0; p < n; ++p) {  // forward differences in log space
      Eigen::VectorXd step = theta;
      step[p] += 1e-4;
      jacobian.col(p) = (problem.relative_errors(step) - r) / 1e-4;
    }
    const Eigen::MatrixXd normal = jacobian.transpose() * jacobian;
    const Eigen::VectorXd gradient = jacobian.transpose() * r;
    bool improved = false;
    for (int attempt = 0; attempt < 10 && !improved; ++attempt) {
      Eigen::MatrixXd damped = normal;
      damped.diagonal() += lambda * normal.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd delta = damped.ldlt().solve(-gradient);
      // At most e^3 per step; nothing below a parameter's floor.
      const Eigen::VectorXd candidate = (theta + delta.cwiseMax(-3.0).cwiseMin(3.0)).cwiseMax(problem.log_floors());
      const Eigen::VectorXd r_candidate = problem.relative_errors(candidate);
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

double median_error(const Problem& problem, const Eigen::VectorXd& theta) {
  return model::median_abs(to_vector(problem.relative_errors(theta)));
}

Eigen::VectorXd without(const Eigen::VectorXd& v, Eigen::Index i) {
  Eigen::VectorXd out(v.size() - 1);
  out << v.head(i), v.tail(v.size() - i - 1);
  return out;
}

// Leaves out of the fit, one at a time, each parameter the data do not favour over its prior: with it at its prior
// (left out of the calibration) and the others as fitted, the median |error| is smaller. The others are fitted
// again after each one left out. Returns the iterations those refits took.
int keep_priors(Problem& problem, Eigen::VectorXd& theta, std::vector<KeptPrior>& kept) {
  int iterations = 0;
  for (bool dropped = true; dropped && !problem.parameters.empty();) {
    dropped = false;
    const double fitted = median_error(problem, theta);
    for (size_t i = 0; i < problem.parameters.size() && !dropped; ++i) {
      const auto index = static_cast<Eigen::Index>(i);
      Problem trial = problem;
      trial.parameters.erase(trial.parameters.begin() + static_cast<std::ptrdiff_t>(i));
      trial.left.push_back(problem.parameters[i]);
      const Eigen::VectorXd rest = without(theta, index);
      const double prior = median_error(trial, rest);
      if (prior >= fitted) continue;  // worse with the fit: only then the prior
      kept.push_back({problem.parameters[i].name, std::exp(theta[index]), fitted, prior});
      problem.parameters = trial.parameters;
      problem.left = trial.left;
      theta = rest;
      if (theta.size() > 0) iterations += levenberg_marquardt(problem, theta);
      dropped = true;
    }
  }
  return iterations;
}

}  // namespace

std::string describe(const KeptPrior& kept) {
  const bool rate = std::string(kept.name).find("bandwidth") != std::string::npos;
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: the prior kept (fitted %.4g %s: median |error| %.1f %%, %.1f %% with the prior)",
                kept.name.c_str(), rate ? kept.fitted / 1e9 : kept.fitted * 1e6, rate ? "GB/s" : "us",
                100 * kept.median_fitted, 100 * kept.median_prior);
  return text;
}

std::vector<double> predict_collectives(const topologies::ClusterSpec& spec,
                                        const std::vector<CollectiveMeasurement>& measured) {
  const topologies::Topology topology(spec);
  std::vector<double> times;
  std::map<int, model::CommGroup> groups;  // by ranks
  for (const CollectiveMeasurement& m : measured) {
    check_ranks_fit(m.ranks, topology.gpu_count(), m.file);
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

CalibrationFit calibrate_collectives(const topologies::ClusterSpec& base,
                                     const std::vector<CollectiveMeasurement>& measured,
                                     const std::vector<std::string>& inputs, const std::string& date) {
  if (measured.size() < 3) throw topologies::InputError("calibration needs at least 3 measurements");
  CalibrationFit fit;
  topologies::ClusterSpec uncalibrated = base;
  uncalibrated.calibration.reset();
  const std::vector<double> before = predict_collectives(uncalibrated, measured);
  for (size_t i = 0; i < measured.size(); ++i)
    fit.rel_errors_before.push_back((before[i] - measured[i].time_s) / measured[i].time_s);
  Problem problem{base, measured, parameters_for(base, measured)};
  Eigen::VectorXd theta(static_cast<Eigen::Index>(problem.parameters.size()));
  for (size_t i = 0; i < problem.parameters.size(); ++i)
    theta[static_cast<Eigen::Index>(i)] = std::log(problem.parameters[i].start);
  fit.iterations = levenberg_marquardt(problem, theta);
  fit.iterations += keep_priors(problem, theta, fit.kept_priors);
  fit.calibration = calibration_of(problem.parameters, theta, problem.left);
  for (const KeptPrior& k : fit.kept_priors) fit.calibration.provenance.kept_priors.push_back(describe(k));
  fit.rel_errors_after = to_vector(problem.relative_errors(theta));
  for (size_t i = 0; i < problem.parameters.size(); ++i) {
    fit.fitted.emplace_back(problem.parameters[i].name, std::exp(theta[static_cast<Eigen::Index>(i)]));
  }
  topologies::ClusterSpec calibrated = base;
  calibrated.calibration = fit.calibration;
  topologies::CalibrationProvenance& p = fit.calibration.provenance;
  p.inputs = inputs;
  p.date = date;
  p.tool = "treering calibrate";
  p.r_squared = log_r_squared(predict_collectives(calibrated, measured), measured);
  p.median_abs_rel_error = model::median_abs(fit.rel_errors_after);
  p.max_abs_rel_error = max_abs(fit.rel_errors_after);
  auto [smallest, largest] = std::minmax_element(measured.begin(), measured.end(),
                                                 [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  auto [fewest, most] = std::minmax_element(measured.begin(), measured.end(),
                                            [](const auto& a, const auto& b) { return a.ranks < b.ranks; });
  p.sizes_bytes = std::pair{smallest->bytes, largest->bytes};
  p.ranks = std::pair{fewest->ranks, most->ranks};
  std::map<double, double> worst;  // by size: the largest |error| there
  for (size_t i = 0; i < measured.size(); ++i)
    worst[measured[i].bytes] = std::max(worst[measured[i].bytes], std::abs(fit.rel_errors_after[i]));
  p.residuals.assign(worst.begin(), worst.end());
  return fit;
}

}  // namespace treering::validate
