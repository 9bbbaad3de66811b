// `treering validate` on what the GPU measured by itself: attention benchmarks (the compute model, kernel by
// kernel) and decode steps (the step model, part by part). The model's prediction of each point, its error, and
// the medians; the command and Python's validate() report the same figures.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "treering/topologies/cluster.hpp"
#include "treering/validate/attention_fit.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/validate/step_fit.hpp"

namespace treering::analysis {

// What `files` hold: nothing of these (collectives, timed decodes), attention benchmarks or decode steps. Throws
// InputError when they mix a kind of these with anything else (each is validated apart).
enum class KernelFiles { none, attention, steps };
KernelFiles kernel_files(const std::vector<std::string>& files);

struct StepCheck {
  validate::StepPoint measured;
  validate::StepPrediction predicted;
  double rel_error = 0;                                       // (model - measured) / measured, the whole step
  std::array<double, validate::kStepParts> part_rel_error{};  // each part's (0 where the part was not measured)
};

struct StepValidation {
  std::vector<StepCheck> steps;
  double median_abs_rel_error = 0;
  std::vector<std::string> notes;  // loopback steps left out
};

// The one-GPU steps of `files` against `spec`'s step model. Throws InputError when there are none.
StepValidation validate_steps(const topologies::ClusterSpec& spec, const std::vector<std::string>& files);
// {"cases": [{"kind": "step", ...}], "summary": {"steps", "median_abs_rel_error"}}.
nlohmann::ordered_json step_validation_json(const StepValidation& validation);

struct AttentionCheck {
  validate::AttentionMeasurement measured;
  int head_dim = 0, group = 0;    // the kernel's shape
  bool shape_calibrated = false;  // the cluster's calibration has a line for this shape
  double predicted_s = 0;
  double rel_error = 0;
};

struct AttentionValidation {
  std::vector<AttentionCheck> kernels;
  double median_abs_rel_error = 0, max_abs_rel_error = 0;
};

AttentionValidation validate_attention(const topologies::ClusterSpec& spec, const std::vector<std::string>& files);
// {"cases": [{"kind": "attention", ...}], "summary": {"kernels", "median_abs_rel_error", "max_abs_rel_error"}}.
nlohmann::ordered_json attention_validation_json(const AttentionValidation& validation);

}  // namespace treering::analysis
