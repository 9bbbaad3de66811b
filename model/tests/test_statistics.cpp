// Nearest-rank percentiles (the project's one definition).
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/model/statistics.hpp"

namespace model = treering::model;

TEST_CASE("percentile: the ceil(f x n)-th smallest value") {
  const std::vector<double> four{4, 1, 3, 2};
  CHECK(model::percentile(four, 0.5) == 2);   // ceil(2.0) = 2nd: the lower median
  CHECK(model::percentile(four, 0.9) == 4);   // ceil(3.6) = 4th
  CHECK(model::percentile(four, 0.1) == 1);   // ceil(0.4) = 1st
  CHECK(model::percentile(four, 0.75) == 3);  // ceil(3.0) = 3rd
  CHECK(model::percentile(four, 1.0) == 4);
  const std::vector<double> five{50, 10, 40, 20, 30};
  CHECK(model::median(five) == 30);  // ceil(2.5) = 3rd: the middle one
  CHECK(model::median(four) == 2);
}

TEST_CASE("median_abs: the median of the magnitudes") {
  CHECK(model::median_abs({-0.3, 0.1, -0.05, 0.2}) == 0.1);  // {0.05, 0.1, 0.2, 0.3}: the 2nd
}

TEST_CASE("percentile: no values, or a fraction of 0 or over 1, are errors") {
  CHECK_THROWS_AS(model::percentile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(model::percentile({1.0}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(model::percentile({1.0}, 1.5), std::invalid_argument);
}
