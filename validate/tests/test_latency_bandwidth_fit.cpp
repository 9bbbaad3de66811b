// Latency-bandwidth fits on data made from known parameters.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/validate/latency_bandwidth_fit.hpp"

using treering::validate::fit_latency_bandwidth;

TEST_CASE("exact alpha-beta data is recovered") {
  // t = 5 us + n / 50 GB/s: 8 B -> 5.00016 us, 1 MiB -> 5 + 20.97152 = 25.97152 us, 1 GiB -> 21479.83 us.
  std::vector<double> sizes{8, 1048576, 1073741824};
  std::vector<double> times{5.00016e-6, 25.97152e-6, 5e-6 + 1073741824 / 50e9};
  auto fit = fit_latency_bandwidth(sizes, times);
  CHECK(fit.latency_s == doctest::Approx(5e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bandwidth_Bps == doctest::Approx(50e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.r_squared == doctest::Approx(1.0).scale(1e-12));
  CHECK(fit.max_abs_rel_error < 1e-6);
}

TEST_CASE("relative weighting keeps small messages accurate") {
  // Small sizes at 10 us (+1% noise alternating), a large one 10% off the line: an unweighted fit would let
  // the large point pull alpha far away; relative weighting keeps alpha near 10 us.
  std::vector<double> sizes{8, 64, 512, 4096, 1e9};
  std::vector<double> times{10.1e-6, 9.9e-6, 10.1e-6, 9.9e-6, (10e-6 + 1e9 / 25e9) * 1.1};
  auto fit = fit_latency_bandwidth(sizes, times);
  CHECK(fit.latency_s == doctest::Approx(10e-6).scale(1e-12).epsilon(0.03));
  CHECK(fit.max_abs_rel_error < 0.11);
}

TEST_CASE("fits that cannot be made are refused") {
  CHECK_THROWS_AS(fit_latency_bandwidth({8}, {1e-6}), std::invalid_argument);
  CHECK_THROWS_AS(fit_latency_bandwidth({8, 8}, {1e-6, 2e-6}), std::invalid_argument);
  CHECK_THROWS_AS(fit_latency_bandwidth({8, 16}, {1e-6, -1e-6}), std::invalid_argument);
  CHECK_THROWS_AS(fit_latency_bandwidth({8, 1e9}, {1e-3, 1e-6}), std::invalid_argument);  // shrinking time
}
