// `treering calibrate --format json` on benchmarks (calibration_runs.hpp): what was fitted, and how well.
#include <algorithm>
#include <cmath>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/model/statistics.hpp"

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

ordered_json optional_json(const std::optional<double>& value) { return value ? ordered_json(*value) : ordered_json(); }

double max_abs(const std::vector<double>& values) {
  double worst = 0;
  for (double v : values) worst = std::max(worst, std::fabs(v));
  return worst;
}

ordered_json bands_json(const std::vector<topologies::SizeBand>& bands) {
  ordered_json list = ordered_json::array();
  for (const topologies::SizeBand& b : bands)
    list.push_back({{"from_bytes", b.from_bytes}, {"latency_s", b.latency_s}, {"bandwidth_Bps", b.bandwidth_Bps}});
  return list;
}

// The network: the fitted parameters and errors (top-level keys, as Python's calibrate() has always returned
// them), the send/recv bands, the parameters left at their priors.
void add_network(ordered_json& json, const BenchmarkCalibration& result) {
  const validate::CalibrationFit& fit = result.network.fit;
  const topologies::CalibrationProvenance& provenance = fit.calibration.provenance;
  json["collectives"] = result.collectives;
  json["sends"] = result.sends;
  json["fitted"] = ordered_json::object();
  for (const auto& [name, value] : fit.fitted) json["fitted"][name] = value;
  json["iterations"] = fit.iterations;
  json["median_abs_rel_error_before"] =
      result.collectives > 0 ? ordered_json(model::median_abs(fit.rel_errors_before)) : ordered_json();
  json["median_abs_rel_error_after"] = optional_json(provenance.median_abs_rel_error);
  json["max_abs_rel_error"] = optional_json(provenance.max_abs_rel_error);
  json["r_squared"] = optional_json(provenance.r_squared);
  json["kept_priors"] = ordered_json::array();
  for (const validate::KeptPrior& k : fit.kept_priors) {
    json["kept_priors"].push_back({{"name", k.name},
                                   {"fitted", k.fitted},
                                   {"median_abs_rel_error_fitted", k.median_fitted},
                                   {"median_abs_rel_error_prior", k.median_prior}});
  }
  const std::optional<validate::P2pFit>& p2p = result.network.p2p;
  json["p2p_bands"] = p2p ? p2p->scale_up.size() + p2p->scale_out.size() : 0;
  json["p2p_median_abs_rel_error"] = p2p ? ordered_json(model::median_abs(p2p->rel_errors)) : ordered_json();
  json["p2p"] = p2p ? ordered_json{{"scale_up", bands_json(p2p->scale_up)}, {"scale_out", bands_json(p2p->scale_out)}}
                    : ordered_json();
}

ordered_json attention_json(const BenchmarkCalibration& result) {
  if (!result.compute) return nullptr;
  ordered_json shapes = ordered_json::array();
  for (const validate::AttentionShapeFit& f : result.attention_fits) {
    shapes.push_back({{"head_dim", f.line.head_dim},
                      {"group", f.line.group},
                      {"fixed_s", f.line.fixed_s},
                      {"split_per_chunk_s", f.line.split_per_chunk_s},
                      {"bandwidth_Bps", f.line.bandwidth_Bps},
                      {"points", f.points},
                      {"workloads", f.workloads},
                      {"tokens", {f.tokens.first, f.tokens.second}},
                      {"median_abs_rel_error", f.median_abs_rel_error},
                      {"max_abs_rel_error", f.max_abs_rel_error}});
  }
  return {{"kernels", result.kernels.size()},
          {"hbm_efficiency", result.compute->hbm_efficiency},
          {"launch_overhead_s", result.compute->launch_overhead_s},
          {"median_abs_rel_error", result.compute->median_abs_rel_error},
          {"shapes", shapes}};
}

ordered_json step_json(const BenchmarkCalibration& result) {
  if (!result.step_fit) return nullptr;
  const validate::StepFit& fit = *result.step_fit;
  ordered_json parts = ordered_json::object();
  for (std::size_t i = 0; i < static_cast<std::size_t>(validate::kStepParts); ++i) {
    parts[topologies::kStepCalibrationParts[i]] = {
        {"fixed_s", fit.parts[i].fixed_s},
        {"efficiency", fit.parts[i].efficiency},
        {"slope_fitted", fit.slope_fitted[i]},
        {"median_abs_rel_error_before", model::median_abs(fit.part_errors_before[i])},
        {"median_abs_rel_error_after", model::median_abs(fit.part_errors_after[i])},
        {"max_abs_rel_error_after", max_abs(fit.part_errors_after[i])},
        {"share", fit.share[i]}};
  }
  return {{"steps", result.steps.size()},
          {"parts", parts},
          {"median_abs_rel_error_before", model::median_abs(fit.step_errors_before)},
          {"median_abs_rel_error_after", model::median_abs(fit.step_errors_after)},
          {"max_abs_rel_error_after", max_abs(fit.step_errors_after)}};
}

}  // namespace

ordered_json benchmark_calibration_json(const BenchmarkCalibration& result,
                                        const BenchmarkCalibrationRequest& request) {
  ordered_json json{{"output", request.output_name}, {"inputs", request.files}};
  add_network(json, result);
  json["attention"] = attention_json(result);
  json["step"] = step_json(result);
  json["notes"] = result.notes;
  return json;
}

}  // namespace treering::analysis
