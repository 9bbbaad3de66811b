// Percentiles, one definition for the whole project: the nearest rank.
#pragma once

#include <vector>

namespace treering::model {

// The nearest-rank percentile: the smallest value with at least FRACTION of the values at or below it, i.e. the
// ceil(FRACTION x n)-th smallest (1-based). It is always one of the values, never an interpolation.
// Worked example, values {4, 1, 3, 2}: p50 = the ceil(0.5 x 4) = 2nd smallest = 2 (the lower median);
// p90 = the ceil(3.6) = 4th = 4; p10 = the ceil(0.4) = 1st = 1.
// Throws std::invalid_argument for no values or a FRACTION outside (0, 1].
double percentile(std::vector<double> values, double fraction);

// percentile(values, 0.5): for an even count, the lower of the two middle values.
double median(std::vector<double> values);

// The median of the absolute values (relative errors of either sign).
double median_abs(std::vector<double> values);

}  // namespace treering::model
