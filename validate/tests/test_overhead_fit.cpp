// Fitting a profile's overheads: timings made with known overheads give them back, a first call is found whole,
// and fits the timings cannot determine are refused.
#include <doctest/doctest.h>

#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"
#include "treering/validate/overhead_fit.hpp"

using namespace treering;

namespace {

// What `profile` makes of a timing, through the model's public API (prefill not timed).
double model_s(const validate::TimedDecode& t, const topologies::ImplProfile& profile) {
  const topologies::Topology topology = topologies::build_topology(t.cluster);
  std::vector<int> gpus(static_cast<size_t>(t.gpus));
  std::iota(gpus.begin(), gpus.end(), 0);
  const model::DecodeModel decode(topology, gpus);
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(profile);
  return decode.generation_s(model::parse_decode_algorithm(t.algorithm), model::find_workload(t.workload), t.seq_len,
                             *t.tokens, options);
}

validate::TimedDecode timing(const std::string& algorithm, int gpus, long long seq_len, long long tokens) {
  validate::TimedDecode t;
  t.cluster = "dgx-h100";
  t.workload = "llama3.1-8b";
  t.algorithm = algorithm;
  t.gpus = gpus;
  t.seq_len = seq_len;
  t.tokens = tokens;
  t.file = "synthetic";
  return t;
}

// The paper's Llama program timed with a 5 us launch and a 12 us host round trip (its preset: 3.8 us and 5.8 us),
// ring and tree on 2 and 8 GPUs.
std::vector<validate::TimedDecode> known_overhead_timings(const topologies::ImplProfile& prior) {
  topologies::ImplProfile truth = prior;
  truth.kernel_launch_s = 5e-6;
  truth.host_round_trip_s = 12e-6;
  std::vector<validate::TimedDecode> timings;
  for (const char* algorithm : {"ring", "tree"}) {
    for (int gpus : {2, 8}) timings.push_back(timing(algorithm, gpus, 20000, 10));
  }
  for (auto& t : timings) t.measured_s = model_s(t, truth);
  return timings;
}

}  // namespace

TEST_CASE("timings made with known launch and host costs give them back") {
  const topologies::ImplProfile prior = topologies::load_impl_profile("paper-torch-llama");
  const std::vector<validate::TimedDecode> timings = known_overhead_timings(prior);
  const auto fit = validate::fit_overheads(
      prior, timings, {validate::Overhead::kernel_launch, validate::Overhead::host_round_trip}, "test");
  REQUIRE(fit.estimates.size() == 2);
  CHECK(fit.estimates[0].prior_s == doctest::Approx(3.8e-6).scale(1e-12));
  CHECK(fit.estimates[0].fitted_s == doctest::Approx(5e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.estimates[1].fitted_s == doctest::Approx(12e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.max_abs_rel_error < 1e-6);
  CHECK(fit.median_abs_rel_error_before > 1e-3);  // the prior was off
  // The parts add up: the rest of the model, each overhead's share and what is left over.
  CHECK(fit.base_share + fit.estimates[0].share + fit.estimates[1].share + fit.unexplained_share ==
        doctest::Approx(1.0).scale(1e-12).epsilon(1e-6));
  CHECK(*fit.profile.kernel_launch_s == doctest::Approx(5e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.profile.name == "paper-torch-llama-fitted");
  CHECK(fit.profile.sources.at("kernel_launch").find("fitted by treering calibrate to 4 timings (test)") !=
        std::string::npos);
}

TEST_CASE("a first call of 0.5 s inside every timing is found whole, and its share is its part of the measured time") {
  const topologies::ImplProfile& efficient = topologies::default_impl_profile();
  std::vector<validate::TimedDecode> timings = {timing("tree", 8, 20000, 1), timing("tree", 8, 20000, 4),
                                                timing("ring", 8, 80000, 2)};
  double measured_sum_s = 0;
  for (auto& t : timings) {
    t.measured_s = model_s(t, efficient) + 0.5;  // paid once per timed call (the profile's first_call)
    measured_sum_s += t.measured_s;
  }
  const auto fit = validate::fit_overheads(efficient, timings, {validate::Overhead::first_call}, "test");
  CHECK(fit.estimates[0].fitted_s == doctest::Approx(0.5).scale(1e-12).epsilon(1e-9));
  CHECK(fit.estimates[0].share == doctest::Approx(3 * 0.5 / measured_sum_s).scale(1e-12).epsilon(1e-9));
  CHECK(fit.estimates[0].std_error_s < 1e-9);  // exact data
}

TEST_CASE("fits the timings cannot determine are refused, saying why") {
  const topologies::ImplProfile& efficient = topologies::default_impl_profile();
  std::vector<validate::TimedDecode> timings = {timing("tree", 8, 20000, 1), timing("tree", 8, 20000, 2),
                                                timing("tree", 8, 20000, 8)};
  for (auto& t : timings) t.measured_s = 1e-3 * static_cast<double>(*t.tokens);
  using validate::Overhead;
  // The efficient program makes no host round trips.
  CHECK_THROWS_WITH_AS(validate::fit_overheads(efficient, timings, {Overhead::host_round_trip}, "test"),
                       doctest::Contains("no timing depends on host_round_trip"), std::invalid_argument);
  // One tree layer per token launches the same kernels and collectives whatever the token count: both counts
  // grow with the tokens alone, in the same proportion.
  CHECK_THROWS_WITH_AS(
      validate::fit_overheads(efficient, timings, {Overhead::kernel_launch, Overhead::collective_call}, "test"),
      doctest::Contains("not identifiable: kernel_launch, collective_call"), std::invalid_argument);
  timings.resize(1);
  CHECK_THROWS_WITH_AS(validate::fit_overheads(efficient, timings, {Overhead::first_call}, "test"),
                       doctest::Contains("1 timing(s) cannot fit 1 overhead(s)"), std::invalid_argument);
  CHECK_THROWS_AS(validate::parse_overhead("dispatch"), std::invalid_argument);
}

TEST_CASE("a fit that has not settled in its iterations is refused, not returned") {
  // The same timings as above: from the preset's 3.8 us and 5.8 us one Gauss-Newton step moves both values, so
  // after a single iteration the fit has not settled (it needs a second to see the values stop).
  const topologies::ImplProfile prior = topologies::load_impl_profile("paper-torch-llama");
  const std::vector<validate::TimedDecode> timings = known_overhead_timings(prior);
  const std::vector<validate::Overhead> both{validate::Overhead::kernel_launch, validate::Overhead::host_round_trip};
  CHECK_THROWS_WITH_AS(validate::fit_overheads(prior, timings, both, "test", 1),
                       "the overhead fit did not settle in 1 iteration (the values still moved by more than 1e-9 of "
                       "themselves): nothing written",
                       std::invalid_argument);
  CHECK(validate::fit_overheads(prior, timings, both, "test").iterations > 1);  // 30 by default: it settles
}
