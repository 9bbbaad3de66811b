#include "step_reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

std::string percent(double value) { return format_percent(value, true); }
std::string magnitude(double value) { return format_percent(value); }

}  // namespace

void print_step_fit(std::ostream& out, const validate::StepFit& fit, std::size_t points) {
  Table table({"step part", "fitted, per layer", "median |error| before", "after", "worst after", "share of the step"});
  for (int p = 0; p < validate::kStepParts; ++p) {
    const auto i = static_cast<std::size_t>(p);
    const topologies::StepPartCalibration& c = fit.parts[i];
    const std::string line = topologies::format_duration(c.fixed_s) + " + bytes / (rated x " +
                             std::to_string(c.efficiency).substr(0, 5) + ")" +
                             (fit.slope_fitted[i] ? "" : " (efficiency: the prior's)");
    std::vector<double> after = fit.part_errors_after[i];
    for (double& e : after) e = std::fabs(e);
    table.add_row({std::string(topologies::kStepCalibrationParts[p]) + (p == 4 ? " (per step)"
                                                                        : p == 0 && !fit.attention_shapes.empty()
                                                                            ? " (other shapes)"
                                                                            : ""),
                   line, magnitude(model::median_abs(fit.part_errors_before[i])),
                   magnitude(model::median_abs(fit.part_errors_after[i])),
                   magnitude(*std::max_element(after.begin(), after.end())), magnitude(fit.share[i])});
  }
  for (const topologies::StepAttentionShape& shape : fit.attention_shapes) {  // the attention by kernel shape
    std::vector<double> before, after;
    for (std::size_t i = 0; i < fit.point_shapes.size(); ++i) {
      if (fit.point_shapes[i] != std::pair{shape.head_dim, shape.group}) continue;
      before.push_back(fit.part_errors_before[0][i]);
      after.push_back(std::fabs(fit.part_errors_after[0][i]));
    }
    table.add_row({"  head dim " + std::to_string(shape.head_dim) + ", group " + std::to_string(shape.group),
                   topologies::format_duration(shape.line.fixed_s) + " + bytes / (rated x " +
                       std::to_string(shape.line.efficiency).substr(0, 5) + ")",
                   magnitude(model::median_abs(before)), magnitude(model::median_abs(after)),
                   magnitude(*std::max_element(after.begin(), after.end())), ""});
  }
  table.print(out);
  std::vector<double> worst = fit.step_errors_after;
  for (double& e : worst) e = std::fabs(e);
  out << "decode steps: " << points << " measurements; median |error| of the step "
      << magnitude(model::median_abs(fit.step_errors_before)) << " before, "
      << magnitude(model::median_abs(fit.step_errors_after)) << " after (worst "
      << magnitude(*std::max_element(worst.begin(), worst.end())) << ")\n";
}

void print_step_validation(std::ostream& out, const StepValidation& validation) {
  std::vector<std::string> header{"workload", "batch", "tokens", "tp", "measured", "model", "error"};
  for (const char* part : topologies::kStepCalibrationParts) header.emplace_back(part);
  Table table(header);
  for (const StepCheck& c : validation.steps) {
    const validate::StepPoint& p = c.measured;
    std::vector<std::string> row{p.workload,
                                 std::to_string(p.batch),
                                 std::to_string(p.seq_len),
                                 std::to_string(p.tp),
                                 topologies::format_duration(p.step_s),
                                 topologies::format_duration(c.predicted.step_s),
                                 percent(c.rel_error)};
    for (double e : c.part_rel_error) row.push_back(percent(e));
    table.add_row(row);
  }
  table.print(out);
  out << "model vs measured step: median |error| " << magnitude(validation.median_abs_rel_error) << " over "
      << validation.steps.size() << " steps\n";
}

}  // namespace treering::cli
