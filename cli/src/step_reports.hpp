// The real decode step in treering calibrate and validate: the fit's report (per part: the fitted line, its
// errors before and after, its share of the step) and the model against measured steps, part by part.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "treering/analysis/kernel_validation.hpp"
#include "treering/validate/step_fit.hpp"

namespace treering::cli {

void print_step_fit(std::ostream& out, const validate::StepFit& fit, std::size_t points);
// treering validate on step files: a row per point (measured, model, error, each part's error) and the median.
void print_step_validation(std::ostream& out, const analysis::StepValidation& validation);

}  // namespace treering::cli
