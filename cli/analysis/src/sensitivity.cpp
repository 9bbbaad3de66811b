#include "treering/analysis/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

namespace {

// The latency of each algorithm on the cluster described by `text`.
std::vector<double> latencies(const std::string& text, const SensitivityRequest& request) {
  topologies::ClusterSpec spec = topologies::load_cluster_text(text, request.source_name);
  topologies::apply_overrides(spec, {request.nodes, request.gpus_per_node, {}});
  const topologies::Topology topology(std::move(spec));
  const model::DecodeModel decode(topology, request.gpus);
  std::vector<double> out;
  for (model::DecodeAlgorithm algorithm : request.algorithms) {
    out.push_back(decode.predict(algorithm, request.workload, request.seq_len, request.options).latency_s);
  }
  return out;
}

// The file has PATH, and every value it names is a positive number.
bool usable(const std::string& text, const std::string& source, const std::string& path) {
  const std::vector<std::string> values = topologies::setting_values(text, source, path);
  return !values.empty() && std::all_of(values.begin(), values.end(), [](const std::string& v) {
    char* end = nullptr;
    const double number = std::strtod(v.c_str(), &end);
    return end != v.c_str() && number > 0;
  });
}

}  // namespace

const std::vector<std::string>& default_sensitivity_parameters() {
  static const std::vector<std::string> parameters{"nics.bandwidth",      "nics.latency",           "fabric.bandwidth",
                                                   "fabric.latency",      "hbm_bandwidth",          "launch_overhead",
                                                   "network.hop_latency", "network.link_bandwidth", "peak_fp16"};
  return parameters;
}

SensitivityResult sensitivity(const SensitivityRequest& request) {
  const double step = request.step;
  if (!(step > 0 && step < 1))
    throw topologies::InputError("the step must be between 0 and 1, got " + std::to_string(step));
  std::vector<std::string> parameters = request.parameters;
  if (parameters.empty()) {
    for (const std::string& path : default_sensitivity_parameters()) {
      if (usable(request.cluster_text, request.source_name, path)) parameters.push_back(path);
    }
  }
  SensitivityResult result{latencies(request.cluster_text, request), {}};
  for (const std::string& path : parameters) {
    const std::string& text = request.cluster_text;
    const auto up = latencies(topologies::scale_setting(text, request.source_name, path, 1 + step), request);
    const auto down = latencies(topologies::scale_setting(text, request.source_name, path, 1 - step), request);
    SensitivityRow row{path, topologies::setting_values(text, request.source_name, path).front(), {}};
    for (size_t a = 0; a < up.size(); ++a)
      row.elasticities.push_back(std::log(up[a] / down[a]) / std::log((1 + step) / (1 - step)));
    result.rows.push_back(row);
  }
  return result;
}

}  // namespace treering::analysis
