// Prediction bands (uncertainty.hpp).
#include "treering/model/uncertainty.hpp"

#include <algorithm>
#include <limits>

namespace treering::model {
namespace {

double upper(double x, double error) {
  if (x <= 0) return 0.0;
  return error < 1 ? x / (1 - error) : std::numeric_limits<double>::infinity();
}

const char* const kHostStagedSource =
    "communication: GPUs through host memory (PCIe without P2P), at least the model's worst |error| on public runs of "
    "such boxes";

// Whether some node of the cluster holds two or more GPUs that reach each other through host memory.
bool stages_through_host(const topologies::Topology& topology) {
  for (const topologies::NodeGroup& group : topology.spec().groups) {
    if (group.fabric.type == topologies::FabricType::pcie && !group.fabric.p2p && group.gpus_per_node > 1) return true;
  }
  return false;
}

}  // namespace

RelativeErrors prediction_errors(const topologies::Topology& topology, const topologies::ImplProfile& profile,
                                 bool extrapolated) {
  return prediction_errors(topology, profile, CalibrationUse{extrapolated, extrapolated, std::nullopt});
}

double calibration_residual(const topologies::CalibrationProvenance& provenance, double low_bytes, double high_bytes) {
  const auto& r = provenance.residuals;
  if (r.empty()) return provenance.max_abs_rel_error.value_or(0.0);
  size_t first = 0, last = r.size() - 1;
  while (first + 1 < r.size() && r[first + 1].first <= low_bytes) ++first;
  while (last > 0 && r[last - 1].first >= high_bytes) --last;
  double worst = 0;
  for (size_t i = std::min(first, last); i <= std::max(first, last); ++i) worst = std::max(worst, r[i].second);
  return worst;
}

RelativeErrors prediction_errors(const topologies::Topology& topology, const topologies::ImplProfile& profile,
                                 const CalibrationUse& use) {
  const auto& calibration = topology.spec().calibration;
  RelativeErrors errors{profile.uncertainty.compute, profile.uncertainty.communication,
                        profile.uncertainty.network_latency,
                        "implementation profile '" + profile.name + "': " + profile.uncertainty.source};
  if (stages_through_host(topology)) {
    errors.communication = std::max(errors.communication, kHostStagedError);
    errors.network_latency = std::max(errors.network_latency, kHostStagedError);
    errors.host_staged = true;
    errors.source += std::string("; ") + kHostStagedSource + " (calibrate to narrow it)";
  }
  if (!calibration) return errors;
  const topologies::CalibrationProvenance& p = calibration->provenance;
  if (!p.max_abs_rel_error && !p.attention_max_abs_rel_error) return errors;
  const double compute_scale = use.compute_extrapolated ? 2.0 : 1.0;
  std::string compute = "from the profile", communication = "the calibration's largest |error|";
  if (p.max_abs_rel_error) {
    const bool local = use.collective_bytes && !use.communication_extrapolated;
    errors.communication = errors.network_latency =
        local ? calibration_residual(p, use.collective_bytes->first, use.collective_bytes->second)
              : *p.max_abs_rel_error * (use.communication_extrapolated ? 2.0 : 1.0);
    if (local)
      communication = "the calibration's residuals at the sizes used";
    else if (use.communication_extrapolated)
      communication += " doubled: extrapolated";
    errors.host_staged = false;
    if (calibration->hbm_efficiency || calibration->launch_overhead_s)
      errors.compute = *p.max_abs_rel_error * compute_scale, compute = "fitted";
  }
  if (p.attention_max_abs_rel_error) {  // the attention fitted by kernel shape: its own worst error
    errors.compute = *p.attention_max_abs_rel_error * compute_scale;
    compute = "the attention fit's";
  }
  if (use.compute_extrapolated && compute != "from the profile") compute += ", doubled: extrapolated";
  errors.source = "communication: " + (p.max_abs_rel_error ? communication : std::string("from the profile")) +
                  "; compute: " + compute;
  if (!p.max_abs_rel_error && errors.host_staged) errors.source += std::string("; ") + kHostStagedSource;
  return errors;
}

Band band_of(double compute_s, double communication_s, const RelativeErrors& errors) {
  return band_of(compute_s, communication_s, 0.0, errors);
}

Band band_of(double compute_s, double communication_s, double network_latency_s, const RelativeErrors& errors) {
  const double network_s = std::clamp(network_latency_s, 0.0, communication_s);
  const double other_s = communication_s - network_s;
  return {compute_s / (1 + errors.compute) + other_s / (1 + errors.communication) +
              network_s / (1 + errors.network_latency),
          upper(compute_s, errors.compute) + upper(other_s, errors.communication) +
              upper(network_s, errors.network_latency)};
}

Band latency_band(const DecodeResult& result, const RelativeErrors& errors) {
  const DecodeBreakdown& b = result.breakdown;
  return band_of(b.compute_s + b.host_s, b.intra_node_s + b.inter_node_s, b.inter_node_latency_bound_s, errors);
}

Band generation_band(const DecodeResult& first, int layers, long long tokens, double generation_s,
                     const RelativeErrors& errors) {
  const DecodeBreakdown& b = first.breakdown;
  const double per_layer_s = b.intra_node_s + b.inter_node_s;
  const double communication_s = std::min(generation_s, static_cast<double>(tokens) * layers * per_layer_s);
  const double network_share = per_layer_s > 0 ? b.inter_node_latency_bound_s / per_layer_s : 0.0;
  return band_of(generation_s - communication_s, communication_s, network_share * communication_s, errors);
}

bool bands_overlap(const Band& a, const Band& b) { return a.low_s <= b.high_s && b.low_s <= a.high_s; }

}  // namespace treering::model
