#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace treering::model {

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) throw topologies::InputError("percentile of no values");
  if (!(fraction > 0 && fraction <= 1)) throw topologies::InputError("a percentile's fraction must be in (0, 1]");
  const double rank = std::ceil(fraction * static_cast<double>(values.size()));  // 1-based
  const auto index = std::min(values.size(), static_cast<std::size_t>(rank)) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
  return values[index];
}

double median(std::vector<double> values) { return percentile(std::move(values), 0.5); }

double median_abs(std::vector<double> values) {
  for (double& value : values) value = std::abs(value);
  return median(std::move(values));
}

}  // namespace treering::model
