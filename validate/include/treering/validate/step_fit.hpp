// Fitting a decode step's parts to real steps (treering-realrun step -o FILE.json, one GPU): per part, the time
// per layer (the LM head's per step) is fixed + bytes / (rated HBM x efficiency), the bytes being what the model
// says the part reads (model::StepResult::part_bytes). A line through (bytes, time) per part, weighted so that
// every point's relative error counts alike: minimise sum ((a + b x_i - y_i) / y_i)^2, a 2 x 2 linear system.
// efficiency = 1 / (b x rated). The attention is fitted once over every point and once per kernel shape (head
// dim, query group), whose fixed cost and bandwidth differ; where the points' bytes hardly vary (the norms and the KV
// append) or the slope comes out negative, the slope stays the model's prior and only `fixed` is fitted; an efficiency
// above 1 is held at 1, and a negative `fixed` held at 0, the other refitted. Example: y = 10 us + x / 2.68 TB/s at x =
// 10 MB and 100 MB (13.7 and 47.3 us): a = 10 us, efficiency 0.80 over an H100's 3.35 TB/s.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "treering/topologies/cluster.hpp"

namespace treering::validate {

constexpr int kStepParts = topologies::kStepCalibrationPartCount;  // attention, projections, mlp, other, lm_head

struct StepPoint {  // one measured step
  std::string workload;
  int batch = 1;
  long long seq_len = 0;
  int tp = 1;
  double step_s = 0;
  std::array<double, kStepParts> part_s{};
  std::string file;
};

// True when `path` is a treering-realrun step file (JSON with "kind": "treering-step").
bool is_step_file(const std::string& path);
// Its measured points (skipped and failed ones left out). topologies::InputError on bad input.
std::vector<StepPoint> read_step_points(const std::string& path);

struct StepPrediction {
  double step_s = 0;
  std::array<double, kStepParts> part_s{};
  std::array<double, kStepParts> part_bytes{};
  int layers = 1;
  int head_dim = 0, group = 0;  // the attention kernel's shape (query heads per KV head)
};
// The model's step for a point on `spec`: tp GPUs of one domain, cp 1, the tree (at cp 1 every algorithm is the
// same kernel). Throws std::invalid_argument for an unknown workload or a layout that does not fit.
StepPrediction predict_step(const topologies::ClusterSpec& spec, const StepPoint& point);

struct StepFit {
  std::array<topologies::StepPartCalibration, kStepParts> parts{};
  std::array<bool, kStepParts> slope_fitted{};                // false: the prior's efficiency kept, only `fixed` fitted
  std::vector<double> step_errors_before, step_errors_after;  // relative, per point
  std::array<std::vector<double>, kStepParts> part_errors_before, part_errors_after;
  std::array<double, kStepParts> share{};  // the part's median share of the measured step
  // The attention's line for each kernel shape whose points' bytes vary (step_attention_shapes); each point's
  // shape, to report the errors by shape.
  std::vector<topologies::StepAttentionShape> attention_shapes;
  std::vector<std::pair<int, int>> point_shapes;  // (head dim, group) per point
};
// Throws std::invalid_argument with fewer than 2 points or a point with tp > 1 (a loopback step times all its
// ranks on one GPU).
StepFit fit_step(const topologies::ClusterSpec& base, const std::vector<StepPoint>& points);

// One part's line (exposed for tests): points (bytes_i, seconds_i); `prior_slope` s/B used where the slope is
// not fitted. Returns {fixed_s, slope s/B, slope fitted?}.
struct PartLine {
  double fixed_s = 0;
  double slope_s_per_byte = 0;
  bool slope_fitted = false;
};
PartLine fit_part_line(const std::vector<double>& bytes, const std::vector<double>& seconds, double prior_slope,
                       double min_slope);

}  // namespace treering::validate
