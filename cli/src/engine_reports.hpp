// Serving engines' benchmarks in treering calibrate and validate: a row per run (its settings, measured, predicted,
// error), and the fitted engine work a step.
#pragma once

#include <ostream>

#include "treering/analysis/engine_runs_report.hpp"

namespace treering::cli {

// treering validate on vLLM latency files: measured against the profile's prediction, run by run, and the median.
void print_engine_validation(std::ostream& out, const analysis::EngineValidation& validation);
// treering calibrate on them: the errors before and after the fit, run by run, then the engine work fitted.
void print_engine_calibration(std::ostream& out, const analysis::EngineCalibration& calibration);

}  // namespace treering::cli
