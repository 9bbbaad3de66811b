#include "treering/validate/compute_fit.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "treering/model/compute.hpp"
#include "treering/model/plan.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/latency_bandwidth_fit.hpp"
#include "treering/model/statistics.hpp"
#include "json_files.hpp"

namespace treering::validate {

bool is_attention_file(const std::string& path) {
  const std::optional<nlohmann::json> json = detail::json_object_in(path);
  return json && detail::string_member(*json, "bench") == "attention";
}

std::vector<AttentionMeasurement> read_attention_measurements(const std::string& path) {
  const nlohmann::json json = detail::read_json_file(path);
  try {
    std::vector<AttentionMeasurement> out;
    for (const nlohmann::json& row : json.at("results").at("attention")) {
      const long long tokens = detail::whole_number(row.at("tokens"), 1, 1e15, path, "tokens");
      out.push_back({row.at("workload").get<std::string>(), tokens, row.at("time_s").at("median").get<double>(), path});
    }
    if (out.empty()) throw topologies::InputError({path, 0, 0}, "no attention results");
    return out;
  } catch (const nlohmann::json::exception& error) {
    throw topologies::InputError({path, 0, 0},
                                 std::string("not a treering-realrun attention bench file: ") + error.what());
  }
}

ComputeFit fit_compute(const topologies::ClusterSpec& base, const std::vector<AttentionMeasurement>& measured) {
  std::vector<double> bytes, times;
  for (const AttentionMeasurement& m : measured) {
    const model::Workload& workload = model::find_workload(m.workload);
    // The bytes the model counts for one kernel (realrun's plans: fp32 partial o and lse).
    const model::PlanSizes sizes = model::plan_sizes(workload, 4, 4);
    bytes.push_back(model::attention_bytes(sizes, m.tokens));
    times.push_back(m.time_s);
  }
  const LatencyBandwidthFit fit = fit_latency_bandwidth(bytes, times);
  const double rated = base.gpu_models.at(base.groups.front().gpu_model).hbm_bandwidth_Bps;
  ComputeFit out{std::max(0.0, fit.latency_s), std::clamp(fit.bandwidth_Bps / rated, 1e-6, 1.0), 0.0};
  std::vector<double> errors;
  for (size_t i = 0; i < bytes.size(); ++i) {
    errors.push_back(std::abs(out.launch_overhead_s + bytes[i] / (rated * out.hbm_efficiency) - times[i]) / times[i]);
  }
  out.median_abs_rel_error = model::median(errors);
  return out;
}

}  // namespace treering::validate
