// Fitting a profile's overheads to timed decodes (overhead_fit.hpp).
#include "treering/validate/overhead_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "timing_models.hpp"
#include "treering/topologies/units.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::validate {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using topologies::ImplProfile;

void set(ImplProfile& profile, Overhead overhead, double value_s) {
  switch (overhead) {
    case Overhead::kernel_launch: profile.kernel_launch_s = value_s; return;
    case Overhead::collective_call: profile.collective_call_s = value_s; return;
    case Overhead::host_round_trip: profile.host_round_trip_s = value_s; return;
    case Overhead::first_call: profile.first_call_s = value_s; return;
  }
}

std::optional<double> prior_of(const ImplProfile& profile, Overhead overhead) {
  switch (overhead) {
    case Overhead::kernel_launch: return profile.kernel_launch_s;
    case Overhead::collective_call: return profile.collective_call_s;
    case Overhead::host_round_trip: return profile.host_round_trip_s;
    case Overhead::first_call: return profile.first_call_s;
  }
  return std::nullopt;
}

// The timings, the prior and the overheads fitted: predictions and their Jacobian for trial values x (seconds).
struct Problem {
  const TimingModels& models;
  const ImplProfile& prior;
  const std::vector<Overhead>& free;
  VectorXd measured_s;
  std::vector<bool> at_prior = std::vector<bool>(free.size(), false);  // left at the prior's value (or its absence)

  VectorXd predict(const VectorXd& x) const {
    ImplProfile profile = prior;
    for (size_t k = 0; k < free.size(); ++k) {
      if (!at_prior[k]) set(profile, free[k], x[static_cast<Eigen::Index>(k)]);
    }
    VectorXd t(measured_s.size());
    for (Eigen::Index i = 0; i < t.size(); ++i) t[i] = models.predict_s(static_cast<size_t>(i), profile);
    return t;
  }
  // c_ik = d t_i / d x_k by a forward difference of 1 us (or 0.1 % of x_k, if larger): exact where t is linear.
  MatrixXd jacobian(const VectorXd& x, const VectorXd& t) const {
    MatrixXd c(t.size(), x.size());
    for (Eigen::Index k = 0; k < x.size(); ++k) {
      VectorXd moved = x;
      const double step_s = std::max(1e-6, 1e-3 * x[k]);
      moved[k] += step_s;
      c.col(k) = (predict(moved) - t) / step_s;
    }
    return c;
  }
};

std::string names_of(const std::vector<Overhead>& overheads) {
  std::string text;
  for (Overhead o : overheads) text += (text.empty() ? "" : ", ") + std::string(to_string(o));
  return text;
}

// Refuses what the timings cannot determine (see overhead_fit.hpp). `weighted`: the Jacobian with rows divided by m_i.
void check_identifiable(const MatrixXd& weighted, const std::vector<Overhead>& free) {
  const Eigen::Index n = weighted.rows(), p = weighted.cols();
  if (n <= p) {
    throw topologies::InputError(std::to_string(n) + " timing(s) cannot fit " + std::to_string(p) + " overhead(s) (" +
                                 names_of(free) +
                                 ") and say how far off the fit is: give more timings than overheads, or fit fewer");
  }
  MatrixXd scaled = weighted;
  for (Eigen::Index k = 0; k < p; ++k) {
    const double norm = scaled.col(k).norm();
    if (!(norm > 1e-9)) {
      throw topologies::InputError(std::string("no timing depends on ") + to_string(free[static_cast<size_t>(k)]) +
                                   " (the profile makes none in these decodes): leave it out of the fit");
    }
    scaled.col(k) /= norm;
  }
  const Eigen::JacobiSVD<MatrixXd> svd(scaled, Eigen::ComputeThinV);
  const VectorXd& s = svd.singularValues();
  if (s[p - 1] >= 1e-3 * s[0]) return;
  std::vector<Overhead> tied;
  const VectorXd v = svd.matrixV().col(p - 1);
  for (Eigen::Index k = 0; k < p; ++k) {
    if (std::abs(v[k]) > 0.2) tied.push_back(free[static_cast<size_t>(k)]);
  }
  throw topologies::InputError(
      "not identifiable: " + names_of(tied) +
      " change the timings in (nearly) the same proportions, so the timings cannot tell them apart; "
      "fit fewer of them, or add timings that differ in tokens generated, algorithm, model or GPUs");
}

// min |A x - b| subject to x >= 0, for a handful of columns: the best feasible least-squares solution over every
// subset of free columns (the others at 0), which is the NNLS optimum. at_bound: the columns held at 0.
VectorXd nonnegative_least_squares(const MatrixXd& a, const VectorXd& b, std::vector<bool>& at_bound) {
  const Eigen::Index p = a.cols();
  VectorXd best = VectorXd::Zero(p);
  double best_residual = b.squaredNorm();
  unsigned best_mask = 0;
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<Eigen::Index> columns;
    for (Eigen::Index k = 0; k < p; ++k) {
      if (mask & (1u << k)) columns.push_back(k);
    }
    MatrixXd sub(a.rows(), static_cast<Eigen::Index>(columns.size()));
    for (size_t j = 0; j < columns.size(); ++j) sub.col(static_cast<Eigen::Index>(j)) = a.col(columns[j]);
    const VectorXd y = sub.colPivHouseholderQr().solve(b);
    if ((y.array() < 0).any()) continue;
    const double residual = (sub * y - b).squaredNorm();
    if (residual < best_residual * (1 - 1e-12)) {
      best_residual = residual;
      best_mask = mask;
      best.setZero();
      for (size_t j = 0; j < columns.size(); ++j) best[columns[j]] = y[static_cast<Eigen::Index>(j)];
    }
  }
  for (Eigen::Index k = 0; k < p; ++k) at_bound[static_cast<size_t>(k)] = !(best_mask & (1u << k));
  return best;
}

}  // namespace

namespace {

// Standard errors of the fitted overheads not at their bound: sigma^2 (A^T A)^-1 over those columns, with sigma^2
// the relative residuals' variance (n - p degrees of freedom).
std::vector<double> standard_errors_s(const MatrixXd& a, const VectorXd& residual, const std::vector<bool>& at_bound) {
  std::vector<Eigen::Index> active;
  for (Eigen::Index k = 0; k < a.cols(); ++k) {
    if (!at_bound[static_cast<size_t>(k)]) active.push_back(k);
  }
  std::vector<double> errors(static_cast<size_t>(a.cols()), 0.0);
  if (active.empty()) return errors;
  MatrixXd sub(a.rows(), static_cast<Eigen::Index>(active.size()));
  for (size_t j = 0; j < active.size(); ++j) sub.col(static_cast<Eigen::Index>(j)) = a.col(active[j]);
  const double dof = static_cast<double>(a.rows() - static_cast<Eigen::Index>(active.size()));
  const double variance = residual.squaredNorm() / std::max(1.0, dof);
  const MatrixXd covariance = variance * (sub.transpose() * sub).inverse();
  for (size_t j = 0; j < active.size(); ++j) {
    errors[static_cast<size_t>(active[j])] =
        std::sqrt(std::max(0.0, covariance(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(j))));
  }
  return errors;
}

// The prior with the fitted values, each citing the fit, and the fit's largest error as its uncertainty.
ImplProfile fitted_profile(const ImplProfile& prior, const std::vector<OverheadEstimate>& estimates, size_t timings,
                           double max_abs_rel_error, const std::string& provenance) {
  ImplProfile profile = prior;
  profile.name = prior.name + "-fitted";
  profile.description = prior.description + "; overheads fitted to " + std::to_string(timings) + " timings";
  profile.origin.clear();
  for (const OverheadEstimate& e : estimates) {
    std::ostringstream source;
    if (e.kept_prior) {
      source << "the prior kept: fitting it to " << timings << " timings (" << provenance << ") gave "
             << topologies::format_duration(e.fitted_s) << ", median |error| "
             << std::round(e.median_fitted * 1000) / 10 << " % against " << std::round(e.median_prior * 1000) / 10
             << " % with the prior";
      const auto cited = prior.sources.find(to_string(e.overhead));
      if (cited != prior.sources.end()) source << "; " << cited->second;
      profile.sources[to_string(e.overhead)] = source.str();
      continue;
    }
    set(profile, e.overhead, e.fitted_s);
    source << "fitted by treering calibrate to " << timings << " timings (" << provenance
           << "): " << topologies::format_duration(e.fitted_s);
    if (e.at_bound)
      source << " (held at its bound: the timings wanted less than 0)";
    else
      source << " +- " << topologies::format_duration(e.std_error_s) << " (1 sigma)";
    profile.sources[to_string(e.overhead)] = source.str();
  }
  const double error = std::ceil(max_abs_rel_error * 1000) / 1000;
  profile.uncertainty = {error, error, error,
                         "the fit's largest |error| over its " + std::to_string(timings) + " timings (" + provenance +
                             "); a decode unlike them may be further off"};
  profile.sources["uncertainty"] = profile.uncertainty.source;
  return profile;
}

}  // namespace

const char* to_string(Overhead overhead) {
  switch (overhead) {
    case Overhead::kernel_launch: return "kernel_launch";
    case Overhead::collective_call: return "collective_call";
    case Overhead::host_round_trip: return "host_round_trip";
    case Overhead::first_call: return "first_call";
  }
  return "?";
}

std::vector<Overhead> all_overheads() {
  return {Overhead::kernel_launch, Overhead::collective_call, Overhead::host_round_trip, Overhead::first_call};
}

Overhead parse_overhead(const std::string& name) {
  for (Overhead o : all_overheads()) {
    if (name == to_string(o)) return o;
  }
  throw topologies::InputError("unknown overhead '" + name +
                               "' (kernel_launch, collective_call, host_round_trip, first_call)");
}

namespace {

// The overheads at least one timing depends on, at the prior's values.
std::vector<Overhead> depended_on(const TimingModels& models, const ImplProfile& prior, const VectorXd& measured_s) {
  const std::vector<Overhead> all = all_overheads();
  const Problem problem{models, prior, all, measured_s};
  VectorXd x(static_cast<Eigen::Index>(all.size()));
  for (size_t k = 0; k < all.size(); ++k) x[static_cast<Eigen::Index>(k)] = prior_of(prior, all[k]).value_or(0.0);
  const MatrixXd dt_dx = problem.jacobian(x, problem.predict(x));
  std::vector<Overhead> used;
  for (size_t k = 0; k < all.size(); ++k) {
    if (dt_dx.col(static_cast<Eigen::Index>(k)).norm() > 1e-9) used.push_back(all[k]);
  }
  if (used.empty()) throw topologies::InputError("no timing depends on any of the profile's overheads");
  return used;
}

std::vector<double> to_std(const VectorXd& v) { return {v.data(), v.data() + v.size()}; }

double median_error(const Problem& problem, const VectorXd& x) {
  return model::median_abs(to_std((problem.predict(x) - problem.measured_s).cwiseQuotient(problem.measured_s)));
}

// Leaves at its prior, one at a time, each overhead whose fitted value gives a larger median |error| over the
// timings than the prior's (the others as fitted). Returns, per overhead, {median fitted, median with the prior}
// for those left at the prior.
std::vector<std::optional<std::pair<double, double>>> keep_priors(Problem& problem, VectorXd& x) {
  std::vector<std::optional<std::pair<double, double>>> kept(problem.free.size());
  for (size_t k = 0; k < problem.free.size(); ++k) {
    const double fitted = median_error(problem, x);
    Problem trial = problem;
    VectorXd y = x;
    const std::optional<double> prior = prior_of(problem.prior, problem.free[k]);
    if (prior)
      y[static_cast<Eigen::Index>(k)] = *prior;
    else
      trial.at_prior[k] = true;
    const double with_prior = median_error(trial, y);
    if (with_prior >= fitted) continue;  // worse with the fit: only then the prior
    kept[k] = std::pair{fitted, with_prior};
    problem.at_prior = trial.at_prior;
    x = y;
  }
  return kept;
}

}  // namespace

OverheadFit fit_overheads(const ImplProfile& prior, const std::vector<TimedDecode>& timings,
                          const std::vector<Overhead>& chosen, const std::string& provenance, int max_iterations) {
  if (chosen.size() > 4 || timings.empty())
    throw topologies::InputError("fit up to four overheads to at least one timing");
  const TimingModels models(timings);
  VectorXd measured_s(static_cast<Eigen::Index>(timings.size()));
  for (size_t i = 0; i < timings.size(); ++i) measured_s[static_cast<Eigen::Index>(i)] = timings[i].measured_s;
  const std::vector<Overhead> free = chosen.empty() ? depended_on(models, prior, measured_s) : chosen;
  Problem problem{models, prior, free, measured_s};
  const VectorXd weight = problem.measured_s.cwiseInverse();
  const auto p = static_cast<Eigen::Index>(free.size());
  VectorXd x(p);
  for (Eigen::Index k = 0; k < p; ++k) x[k] = prior_of(prior, free[static_cast<size_t>(k)]).value_or(0.0);
  const VectorXd before_s = problem.predict(x);

  OverheadFit fit;
  std::vector<bool> at_bound(free.size(), false);
  MatrixXd a;
  VectorXd t = before_s;
  for (fit.iterations = 1;; ++fit.iterations) {
    a = weight.asDiagonal() * problem.jacobian(x, t);
    if (fit.iterations == 1) check_identifiable(a, free);
    // Linearised at x: t(y) ~ t(x) + C (y - x) = m  ->  W C y = W (m - t(x) + C x).
    const VectorXd b = weight.asDiagonal() * (problem.measured_s - t) + a * x;
    const VectorXd next = nonnegative_least_squares(a, b, at_bound);
    const bool converged = ((next - x).array().abs() <= 1e-9 * x.array().abs().max(next.array().abs()) + 1e-15).all();
    x = next;
    t = problem.predict(x);
    if (converged) break;
    if (fit.iterations >= max_iterations) {
      throw topologies::InputError("the overhead fit did not settle in " + std::to_string(max_iterations) +
                                   (max_iterations == 1 ? " iteration" : " iterations") +
                                   " (the values still moved by more than 1e-9 of themselves): nothing written");
    }
  }
  const VectorXd fitted_x = x;
  const auto kept = keep_priors(problem, x);
  t = problem.predict(x);
  const VectorXd residual = weight.asDiagonal() * (t - problem.measured_s);
  const std::vector<double> std_errors_s = standard_errors_s(a, residual, at_bound);
  const double measured_sum_s = problem.measured_s.sum();
  for (Eigen::Index k = 0; k < p; ++k) {
    VectorXd without = x;
    without[k] = 0;
    const auto kk = static_cast<size_t>(k);
    fit.estimates.push_back({free[kk], prior_of(prior, free[kk]), x[k], std_errors_s[kk], at_bound[kk],
                             (t - problem.predict(without)).sum() / measured_sum_s});
    if (kept[kk]) {
      OverheadEstimate& e = fit.estimates.back();
      e.kept_prior = true, e.fitted_s = fitted_x[k], e.median_fitted = kept[kk]->first,
      e.median_prior = kept[kk]->second;
    }
  }
  fit.base_share = problem.predict(VectorXd::Zero(p)).sum() / measured_sum_s;
  fit.unexplained_share = (problem.measured_s - t).sum() / measured_sum_s;
  std::vector<double> before_errors, after_errors;
  for (size_t i = 0; i < timings.size(); ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    fit.timings.push_back({timings[i], before_s[ii], t[ii]});
    before_errors.push_back((before_s[ii] - timings[i].measured_s) / timings[i].measured_s);
    after_errors.push_back(fit.timings.back().rel_error());
  }
  fit.median_abs_rel_error_before = model::median_abs(before_errors);
  fit.median_abs_rel_error = model::median_abs(after_errors);
  fit.max_abs_rel_error = residual.cwiseAbs().maxCoeff();
  fit.profile = fitted_profile(prior, fit.estimates, timings.size(), fit.max_abs_rel_error, provenance);
  return fit;
}

}  // namespace treering::validate
