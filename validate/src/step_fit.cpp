// step_fit.hpp: reading realrun step files, the model's step for each point, the per-part lines.
#include "treering/validate/step_fit.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "treering/model/layout_model.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/topology.hpp"
#include "json_files.hpp"

namespace treering::validate {
namespace {

// A fitted slope needs bytes that vary: the largest over the smallest at least this.
constexpr double kMinBytesSpread = 1.5;

double relative(double predicted, double measured) { return (predicted - measured) / measured; }

// fixed = argmin sum ((a + s x_i - y_i) / y_i)^2 for a given slope s.
double fixed_for(const std::vector<double>& x, const std::vector<double>& y, double slope) {
  double numerator = 0, denominator = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = 1.0 / y[i];
    numerator += u * (1.0 - slope * x[i] * u);
    denominator += u * u;
  }
  return std::max(0.0, numerator / denominator);
}

// The attention's line per kernel shape, from the points of that shape (a shape whose bytes hardly vary keeps
// the line over every point).
void fit_attention_shapes(const std::vector<StepPoint>& points, const std::vector<StepPrediction>& before,
                          const model::ComputeRates& rates, StepFit& fit) {
  std::map<std::pair<int, int>, std::vector<std::size_t>> by_shape;
  for (std::size_t i = 0; i < points.size(); ++i) {
    fit.point_shapes.emplace_back(before[i].head_dim, before[i].group);
    by_shape[fit.point_shapes.back()].push_back(i);
  }
  for (const auto& [shape, indices] : by_shape) {
    std::vector<double> x, y;
    for (std::size_t i : indices) {
      x.push_back(before[i].part_bytes[0] / before[i].layers);
      y.push_back(std::max(points[i].part_s[0], 1e-9) / before[i].layers);
    }
    const PartLine line = fit_part_line(x, y, 1.0 / rates.hbm_Bps, 1.0 / rates.hbm_rated_Bps);
    if (!line.slope_fitted) continue;
    fit.attention_shapes.push_back(
        {shape.first, shape.second, {line.fixed_s, 1.0 / (line.slope_s_per_byte * rates.hbm_rated_Bps)}});
  }
}

}  // namespace

bool is_step_file(const std::string& path) {
  const std::optional<nlohmann::json> json = detail::json_object_in(path);
  return json && detail::string_member(*json, "kind") == "treering-step";
}

std::vector<StepPoint> read_step_points(const std::string& path) {
  const nlohmann::json json = detail::read_json_file(path);
  try {
    std::vector<StepPoint> out;
    for (const nlohmann::json& row : json.at("results")) {
      if (!row.contains("step_s")) continue;  // skipped (did not fit) or failed
      StepPoint p{row.at("workload").get<std::string>(),
                  static_cast<int>(detail::whole_number(row.at("batch"), 1, 1e9, path, "batch")),
                  detail::whole_number(row.at("seq_len"), 0, 1e15, path, "seq_len"),
                  row.contains("tp") ? static_cast<int>(detail::whole_number(row.at("tp"), 1, 1e6, path, "tp")) : 1,
                  row.at("step_s").get<double>(),
                  {},
                  path};
      for (int i = 0; i < kStepParts; ++i)
        p.part_s[static_cast<std::size_t>(i)] =
            row.at("parts_s").at(topologies::kStepCalibrationParts[i]).get<double>();
      if (!(p.step_s > 0) || p.batch < 1 || p.seq_len < 0 || p.tp < 1) {
        throw topologies::InputError({path, 0, 0},
                                     "a step with a non-positive time, batch or tp, or a negative context");
      }
      out.push_back(p);
    }
    if (out.empty()) throw topologies::InputError({path, 0, 0}, "no measured steps (every point skipped or failed)");
    return out;
  } catch (const nlohmann::json::exception& error) {
    throw topologies::InputError({path, 0, 0}, std::string("not a treering-realrun step file: ") + error.what());
  }
}

StepPrediction predict_step(const topologies::ClusterSpec& spec, const StepPoint& point) {
  const topologies::Topology topology(spec);
  model::Workload w = model::find_workload(point.workload);
  w.batch = point.batch;
  const model::LayoutModel layouts(topology, model::place_layout(topology, model::Layout{point.tp, 1}));
  const model::LayoutAttention attention = layouts.attention(model::DecodeAlgorithm::tree, w, point.seq_len);
  const model::StepResult r =
      model::evaluate_step(layouts, attention, model::DecodeAlgorithm::tree, w, point.seq_len, model::Scope::step);
  const model::StepBreakdown& b = r.breakdown;
  const model::StepPartBytes& bytes = r.part_bytes;
  return {r.step_s,
          {b.attention_s, b.projections_s, b.mlp_s, b.other_s, b.lm_head_s},
          {bytes.attention, bytes.projections, bytes.mlp, bytes.other, bytes.lm_head},
          w.layers,
          w.head_dim,
          w.query_heads / w.kv_heads};
}

PartLine fit_part_line(const std::vector<double>& x, const std::vector<double>& y, double prior_slope,
                       double min_slope) {
  if (x.size() != y.size() || x.empty())
    throw topologies::InputError("fit_part_line: as many bytes as times, at least one");
  const auto [low, high] = std::minmax_element(x.begin(), x.end());
  PartLine line;
  if (*low > 0 && *high / *low >= kMinBytesSpread) {
    double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;  // the normal equations of the weighted line
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double u = 1.0 / y[i];
      s00 += u * u, s01 += u * u * x[i], s11 += u * u * x[i] * x[i], r0 += u, r1 += u * x[i];
    }
    const double det = s00 * s11 - s01 * s01;
    const double a = (r0 * s11 - r1 * s01) / det, b = (s00 * r1 - s01 * r0) / det;
    if (det > 0 && b > 0) line = {a, std::max(b, min_slope), true};
  }
  if (!line.slope_fitted) line.slope_s_per_byte = prior_slope;
  // The prior's slope, a slope held at the rated bandwidth, or a line through a negative fixed time: the fixed
  // time refitted for the slope kept (and held at 0 or more).
  if (!line.slope_fitted || line.slope_s_per_byte == min_slope || line.fixed_s < 0)
    line.fixed_s = fixed_for(x, y, line.slope_s_per_byte);
  return line;
}

StepFit fit_step(const topologies::ClusterSpec& base, const std::vector<StepPoint>& points) {
  if (points.size() < 2) throw topologies::InputError("a step calibration needs at least 2 measured steps");
  topologies::ClusterSpec uncalibrated = base;
  if (uncalibrated.calibration) uncalibrated.calibration->step = {};
  const topologies::Topology topology(uncalibrated);
  const model::ComputeRates rates = model::compute_rates(topology, 0);
  std::vector<StepPrediction> before;
  for (const StepPoint& p : points) {
    if (p.tp != 1)
      throw topologies::InputError(
          "a step calibration takes one-GPU steps (tp 1): a loopback step times all its ranks on one GPU");
    before.push_back(predict_step(uncalibrated, p));
  }
  StepFit fit;
  topologies::ClusterSpec calibrated = uncalibrated;
  if (!calibrated.calibration) calibrated.calibration = topologies::Calibration{};
  for (std::size_t part = 0; part < static_cast<std::size_t>(kStepParts); ++part) {
    std::vector<double> x, y, shares;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double per = part == 4 ? 1.0 : before[i].layers;  // the LM head is per step
      x.push_back(before[i].part_bytes[part] / per);
      y.push_back(std::max(points[i].part_s[part], 1e-9) / per);
      shares.push_back(points[i].part_s[part] / points[i].step_s);
      fit.part_errors_before[part].push_back(relative(before[i].part_s[part], points[i].part_s[part]));
    }
    const PartLine line = fit_part_line(x, y, 1.0 / rates.hbm_Bps, 1.0 / rates.hbm_rated_Bps);
    fit.parts[part] = {line.fixed_s, 1.0 / (line.slope_s_per_byte * rates.hbm_rated_Bps)};
    fit.slope_fitted[part] = line.slope_fitted;
    fit.share[part] = model::median(shares);
  }
  fit_attention_shapes(points, before, rates, fit);
  calibrated.calibration->step = fit.parts;
  calibrated.calibration->step_attention_shapes = fit.attention_shapes;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const StepPrediction after = predict_step(calibrated, points[i]);
    fit.step_errors_before.push_back(relative(before[i].step_s, points[i].step_s));
    fit.step_errors_after.push_back(relative(after.step_s, points[i].step_s));
    for (std::size_t part = 0; part < static_cast<std::size_t>(kStepParts); ++part) {
      fit.part_errors_after[part].push_back(relative(after.part_s[part], points[i].part_s[part]));
    }
  }
  return fit;
}

}  // namespace treering::validate
