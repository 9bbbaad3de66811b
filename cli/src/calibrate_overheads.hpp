// treering calibrate on timed decodes (a timings CSV, treering-realrun decode JSON): fits an implementation
// profile's overheads (analysis::calibrate_overheads), writes the fitted profile for --impl and reports each
// overhead's share of the measured time.
#pragma once

#include <string>

#include "reporter.hpp"
#include "treering/analysis/calibration_runs.hpp"

namespace treering::cli {

void run_overhead_calibration(const analysis::OverheadCalibrationRequest& request, Reporter& reporter);

}  // namespace treering::cli
