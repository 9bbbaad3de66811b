// The knee fit (banded_fit.hpp) on synthetic measurements whose lines are known: expected bands by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "treering/validate/banded_fit.hpp"

using namespace treering;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

// t = latency + n / bandwidth, exactly.
double line(double latency_s, double bandwidth_Bps, double bytes) { return latency_s + bytes / bandwidth_Bps; }

}  // namespace

TEST_CASE("a knee between 4 and 16 MiB: two bands, the knee at their geometric mean, 8 MiB") {
  // Below: 10 us + n / 10 GB/s (1 MiB: 114.9 us). Above: 50 us + n / 4 GB/s (16 MiB: 4,244 us, where the
  // lower line would say 1,688 us: one line cannot follow both).
  std::vector<double> sizes{1 * MiB, 2 * MiB, 4 * MiB, 16 * MiB, 32 * MiB, 64 * MiB}, times;
  for (double n : sizes) times.push_back(n < 8 * MiB ? line(10e-6, 10e9, n) : line(50e-6, 4e9, n));
  const validate::BandedFit fit = validate::fit_size_bands(sizes, times);
  REQUIRE(fit.bands.size() == 2);
  CHECK(fit.bands[0].from_bytes == 0);
  CHECK(fit.bands[0].latency_s == doctest::Approx(10e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bands[0].bandwidth_Bps == doctest::Approx(10e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bands[1].from_bytes == doctest::Approx(8 * MiB).scale(1e-12));  // sqrt(4 MiB x 16 MiB)
  CHECK(fit.bands[1].latency_s == doctest::Approx(50e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bands[1].bandwidth_Bps == doctest::Approx(4e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.max_abs_rel_error < 1e-9);
}

TEST_CASE("one straight line stays one band") {
  std::vector<double> sizes{8, 64, 512, 4096, 32768, 262144}, times;
  for (double n : sizes) times.push_back(line(5e-6, 2e9, n));  // 8 B: 5.004 us; 256 KiB: 136.1 us
  const validate::BandedFit fit = validate::fit_size_bands(sizes, times);
  REQUIRE(fit.bands.size() == 1);
  CHECK(fit.bands[0].latency_s == doctest::Approx(5e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bands[0].bandwidth_Bps == doctest::Approx(2e9).scale(1e-12).epsilon(1e-6));
}

TEST_CASE("small noise does not make a knee") {
  // +-1 % alternating on one line: splitting gains too little for two more parameters and a knee.
  std::vector<double> sizes{8, 64, 512, 4096, 32768, 262144, 2097152, 16777216}, times;
  for (size_t i = 0; i < sizes.size(); ++i) times.push_back(line(5e-6, 2e9, sizes[i]) * (i % 2 ? 1.01 : 0.99));
  CHECK(validate::fit_size_bands(sizes, times).bands.size() == 1);
}

TEST_CASE("two knees, three bands; repeated sizes (two benchmark files) count as measurements of one size") {
  // 1 us + n / 20 GB/s up to 64 KiB, 5 us + n / 10 GB/s up to 4 MiB, 60 us + n / 4 GB/s beyond; each size twice.
  std::vector<double> sizes, times;
  for (double n : {16384.0, 32768.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 33554432.0, 67108864.0}) {
    const double t = n <= 65536 ? line(1e-6, 20e9, n) : n <= 4194304 ? line(5e-6, 10e9, n) : line(60e-6, 4e9, n);
    for (int copy = 0; copy < 2; ++copy) sizes.push_back(n), times.push_back(t);
  }
  const validate::BandedFit fit = validate::fit_size_bands(sizes, times);
  REQUIRE(fit.bands.size() == 3);
  CHECK(fit.bands[1].from_bytes == doctest::Approx(131072).scale(1e-12));   // sqrt(64 KiB x 256 KiB) = 128 KiB
  CHECK(fit.bands[2].from_bytes == doctest::Approx(8 * MiB).scale(1e-12));  // sqrt(4 MiB x 16 MiB)
  CHECK(fit.bands[1].bandwidth_Bps == doctest::Approx(10e9).scale(1e-12).epsilon(1e-6));
  CHECK(fit.bands[2].latency_s == doctest::Approx(60e-6).scale(1e-12).epsilon(1e-6));
  CHECK(fit.rel_errors.size() == sizes.size());
}

TEST_CASE("a negative intercept is refused: the line goes through the origin instead") {
  // 1 KB in 1 us, 2 KB in 3 us: the free line has alpha = -1 us; through the origin, the relative least
  // squares give 1/B = (sum n/t) / (sum (n/t)^2) per byte with n/t = 1e9 and 0.667e9 B/s: 1/B = 1.667e9 /
  // 1.444e18 s/B -> B = 0.8667 GB/s.
  const validate::BandedFit fit = validate::fit_size_bands({1000, 2000}, {1e-6, 3e-6});
  REQUIRE(fit.bands.size() == 1);
  CHECK(fit.bands[0].latency_s == 0);
  CHECK(fit.bands[0].bandwidth_Bps == doctest::Approx(1.444444e18 / 1.666667e9).scale(1e-12).epsilon(1e-5));
}

TEST_CASE("bad input is refused") {
  CHECK_THROWS_AS(validate::fit_size_bands({8, 8}, {1e-6, 2e-6}), std::invalid_argument);              // one size
  CHECK_THROWS_AS(validate::fit_size_bands({8, 64}, {1e-6}), std::logic_error);                        // lengths
  CHECK_THROWS_AS(validate::fit_size_bands({8, 64}, {1e-6, -1.0}), std::invalid_argument);             // time
  CHECK_THROWS_AS(validate::fit_size_bands({8, 64, 512}, {3e-6, 2e-6, 1e-6}), std::invalid_argument);  // shrinking
}
