// Fitting an implementation profile's overheads to timed decodes (decode_timings.hpp): the per-kernel launch, the
// per-collective call, the host round trip and the first call, as least squares on relative errors, each >= 0.
//
// The model's time of a timing is, around any profile, close to linear in these overheads: t(x) = t(0) + sum_k
// c_k x_k, where c_k counts the overhead's occurrences on the critical path (kernels launched, host round trips,
// first calls). The fit takes c_k from the model itself (finite differences, so that overlap is honoured),
// solves min sum_i ((t_i(x) - m_i) / m_i)^2 for x >= 0 by Gauss-Newton (each step an exact small NNLS), and
// stops when x moves by less than 1e-9 of itself.
// Example: one layer of 10 kernels measured at 60 us, with t(0) = 20 us; fitting kernel_launch alone gives
// 20 us + 10 x = 60 us -> x = 4 us, which explains 40 / 60 = 67 % of the measured time.
//
// Each overhead whose fitted value gives a larger median |error| over the timings than its prior (the others as
// fitted) keeps the prior, one at a time in the order fitted: a fit never writes a value the timings do
// not favour.
//
// A fit is refused (std::invalid_argument, saying why) when it is not identifiable: no more timings than
// overheads; an overhead no timing depends on; or overheads whose counts are (nearly) proportional across the
// timings, so that they trade off against each other (the smallest singular value of the count matrix, columns
// scaled to unit length and rows by 1/m_i, below 1e-3 of the largest: a 1 % timing error could then move an
// estimate by 1000 %).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/topologies/impl_profile.hpp"
#include "treering/validate/decode_timings.hpp"

namespace treering::validate {

enum class Overhead { kernel_launch, collective_call, host_round_trip, first_call };

// "kernel_launch", "collective_call", "host_round_trip", "first_call" (the profile's keys).
const char* to_string(Overhead overhead);
// Throws std::invalid_argument naming the four.
Overhead parse_overhead(const std::string& name);
std::vector<Overhead> all_overheads();

struct OverheadEstimate {
  Overhead overhead{};
  std::optional<double> prior_s;  // the profile's value; none: kernel_launch from the cluster's GPU figure
  double fitted_s = 0;
  double std_error_s = 0;  // 0 when at the bound (fitted 0)
  bool at_bound = false;   // the unconstrained fit wanted it below 0
  double share = 0;        // of the summed measured time: sum_i (t_i(x) - t_i(x without it)) / sum_i m_i
  // Fitted, the median |error| over the timings was larger than with the prior: the profile keeps the prior (fitted_s
  // is what the fit gave; the profile's source for it says so).
  bool kept_prior = false;
  double median_fitted = 0, median_prior = 0;  // when kept: median |error| with it fitted, with the prior
};

struct FittedTiming {
  TimedDecode timing;
  double before_s = 0;  // with the prior profile
  double after_s = 0;   // with the fitted profile
  double rel_error() const { return (after_s - timing.measured_s) / timing.measured_s; }
};

struct OverheadFit {
  topologies::ImplProfile profile;  // the prior with the fitted values, their sources and the fit's uncertainty
  std::vector<OverheadEstimate> estimates;
  std::vector<FittedTiming> timings;
  double base_share = 0;         // sum_i t_i(fitted overheads at 0) / sum_i m_i: what the rest of the model explains
  double unexplained_share = 0;  // sum_i (m_i - t_i(x)) / sum_i m_i (negative: the fit predicts too much)
  double median_abs_rel_error_before = 0;
  double median_abs_rel_error = 0;
  double max_abs_rel_error = 0;
  int iterations = 0;
};

// `free`: the overheads to fit (the others keep the prior's values); empty: every overhead some timing depends on.
// `provenance` names the inputs and date for the fitted values' sources ("timings.csv, 2026-11-24").
// The Gauss-Newton steps stop when no value moves by more than 1e-9 of itself; a fit that has not settled after
// `max_iterations` throws std::invalid_argument saying so (nothing fitted is returned, so nothing is written).
OverheadFit fit_overheads(const topologies::ImplProfile& prior, const std::vector<TimedDecode>& timings,
                          const std::vector<Overhead>& free, const std::string& provenance, int max_iterations = 30);

}  // namespace treering::validate
