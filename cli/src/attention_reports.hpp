// The attention kernel in treering calibrate and validate: the fit by kernel shape (each parameter with its standard
// error, where the measurements end) and the model against `treering-realrun bench attention` files, point by point.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "treering/analysis/kernel_validation.hpp"
#include "treering/validate/attention_fit.hpp"

namespace treering::cli {

void print_attention_fit(std::ostream& out, const std::vector<validate::AttentionShapeFit>& fits, double rated_hbm_Bps);

// treering validate on attention files: a row per point (measured, model, error) and the median and worst.
void print_attention_validation(std::ostream& out, const analysis::AttentionValidation& validation);

}  // namespace treering::cli
