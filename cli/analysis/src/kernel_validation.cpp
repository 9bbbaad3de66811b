#include "treering/analysis/kernel_validation.hpp"

#include <algorithm>
#include <cmath>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/model/attention_kernel.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

using nlohmann::ordered_json;

KernelFiles kernel_files(const std::vector<std::string>& files) {
  const auto steps = std::count_if(files.begin(), files.end(), validate::is_step_file);
  const auto kernels = std::count_if(files.begin(), files.end(), validate::is_attention_file);
  const auto all = static_cast<long>(files.size());
  if (steps > 0 && steps != all) throw topologies::InputError("validate decode steps apart from other measurements");
  if (kernels > 0 && kernels != all)
    throw topologies::InputError("validate attention benchmarks apart from other measurements");
  return steps > 0 ? KernelFiles::steps : kernels > 0 ? KernelFiles::attention : KernelFiles::none;
}

StepValidation validate_steps(const topologies::ClusterSpec& spec, const std::vector<std::string>& files) {
  StepValidation out;
  std::vector<double> errors;
  for (const validate::StepPoint& p : read_one_gpu_steps(files, false, out.notes)) {
    StepCheck check{p, validate::predict_step(spec, p), 0, {}};
    check.rel_error = (check.predicted.step_s - p.step_s) / p.step_s;
    for (std::size_t i = 0; i < check.part_rel_error.size(); ++i) {
      check.part_rel_error[i] = p.part_s[i] > 0 ? (check.predicted.part_s[i] - p.part_s[i]) / p.part_s[i] : 0.0;
    }
    errors.push_back(check.rel_error);
    out.steps.push_back(check);
  }
  out.median_abs_rel_error = model::median_abs(errors);
  return out;
}

ordered_json step_validation_json(const StepValidation& validation) {
  ordered_json rows = ordered_json::array();
  for (const StepCheck& c : validation.steps) {
    const validate::StepPoint& p = c.measured;
    ordered_json parts = ordered_json::object();
    for (std::size_t i = 0; i < c.part_rel_error.size(); ++i) {
      parts[topologies::kStepCalibrationParts[i]] = {
          {"measured_s", p.part_s[i]}, {"predicted_s", c.predicted.part_s[i]}, {"rel_error", c.part_rel_error[i]}};
    }
    rows.push_back({{"kind", "step"},
                    {"workload", p.workload},
                    {"batch", p.batch},
                    {"seq_len", p.seq_len},
                    {"tp", p.tp},
                    {"measured_s", p.step_s},
                    {"predicted_s", c.predicted.step_s},
                    {"rel_error", c.rel_error},
                    {"parts", parts},
                    {"file", p.file}});
  }
  return {{"cases", rows},
          {"summary", {{"steps", validation.steps.size()}, {"median_abs_rel_error", validation.median_abs_rel_error}}}};
}

AttentionValidation validate_attention(const topologies::ClusterSpec& spec, const std::vector<std::string>& files) {
  AttentionValidation out;
  const auto& shapes =
      spec.calibration ? spec.calibration->attention_shapes : std::vector<topologies::AttentionShapeCalibration>{};
  std::vector<double> magnitudes;
  for (const validate::AttentionMeasurement& m : read_attention_files(files, {})) {
    const model::Workload& w = model::find_workload(m.workload);
    AttentionCheck check{m,
                         w.head_dim,
                         model::split_kv_shape(w).group,
                         model::find_attention_shape(shapes, w) != nullptr,
                         validate::predict_attention_s(spec, m),
                         0};
    check.rel_error = (check.predicted_s - m.time_s) / m.time_s;
    magnitudes.push_back(std::fabs(check.rel_error));
    out.kernels.push_back(check);
  }
  if (magnitudes.empty()) throw topologies::InputError("no attention measurement to validate");
  out.median_abs_rel_error = model::median(magnitudes);
  out.max_abs_rel_error = *std::max_element(magnitudes.begin(), magnitudes.end());
  return out;
}

ordered_json attention_validation_json(const AttentionValidation& validation) {
  ordered_json rows = ordered_json::array();
  for (const AttentionCheck& c : validation.kernels) {
    rows.push_back({{"kind", "attention"},
                    {"workload", c.measured.workload},
                    {"head_dim", c.head_dim},
                    {"group", c.group},
                    {"tokens", c.measured.tokens},
                    {"measured_s", c.measured.time_s},
                    {"predicted_s", c.predicted_s},
                    {"rel_error", c.rel_error},
                    {"shape_calibrated", c.shape_calibrated},
                    {"file", c.measured.file}});
  }
  return {{"cases", rows},
          {"summary",
           {{"kernels", validation.kernels.size()},
            {"median_abs_rel_error", validation.median_abs_rel_error},
            {"max_abs_rel_error", validation.max_abs_rel_error}}}};
}

}  // namespace treering::analysis
