#include "calibration_loader.hpp"

#include <limits>

#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

using yaml::StrictMap;
constexpr double kUnbounded = std::numeric_limits<double>::max();
constexpr int kMaxTokensInRange = std::numeric_limits<int>::max();

std::optional<double> optional_number(const StrictMap& map, std::string_view key, double minimum, double maximum) {
  if (!map.has(key)) return std::nullopt;
  return map.number(key, minimum, maximum);
}

std::optional<double> optional_duration(const StrictMap& map, std::string_view key) {
  if (!map.has(key)) return std::nullopt;
  return map.duration_s(key);
}

// [{size: 8B, error: 0.056}, ...]: the collective fit's largest |error| at each size it measured, sizes increasing.
std::vector<std::pair<double, double>> read_residuals(const std::string& file, const YAML::Node& node) {
  yaml::require_sequence(file, node, "residuals");
  std::vector<std::pair<double, double>> residuals;
  for (const YAML::Node& entry : node) {
    StrictMap map(entry, file, "a residual of the calibration", {"size", "error"});
    const double bytes = map.bytes("size");
    if (!residuals.empty() && bytes <= residuals.back().first)
      yaml::fail(file, map.required("size"), "residuals must list increasing sizes");
    residuals.emplace_back(bytes, map.number("error", 0.0, kUnbounded));
  }
  return residuals;
}

CalibrationProvenance read_provenance(const std::string& file, const YAML::Node& node) {
  StrictMap map(node, file, "calibration provenance",
                {"inputs", "date", "tool", "r_squared", "median_abs_rel_error", "max_abs_rel_error", "sizes", "ranks",
                 "p2p_sizes", "tokens", "attention_max_abs_rel_error", "residuals", "kept_prior"});
  CalibrationProvenance provenance;
  YAML::Node inputs = map.required("inputs");
  yaml::require_sequence(file, inputs, "inputs");
  for (const YAML::Node& input : inputs) provenance.inputs.push_back(yaml::scalar_string(file, input, "inputs"));
  provenance.date = map.string("date");
  provenance.tool = map.string("tool");
  provenance.r_squared = optional_number(map, "r_squared", 0.0, 1.0);
  provenance.median_abs_rel_error = optional_number(map, "median_abs_rel_error", 0.0, kUnbounded);
  provenance.max_abs_rel_error = optional_number(map, "max_abs_rel_error", 0.0, kUnbounded);
  provenance.attention_max_abs_rel_error = optional_number(map, "attention_max_abs_rel_error", 0.0, kUnbounded);
  if (YAML::Node sizes = map.optional("sizes")) {  // {min: 8B, max: 16GiB}
    StrictMap range(sizes, file, "calibration provenance sizes", {"min", "max"});
    provenance.sizes_bytes = std::pair{range.bytes("min"), range.bytes("max")};
  }
  if (YAML::Node sizes = map.optional("p2p_sizes")) {
    StrictMap range(sizes, file, "calibration provenance p2p_sizes", {"min", "max"});
    provenance.p2p_sizes_bytes = std::pair{range.bytes("min"), range.bytes("max")};
  }
  if (YAML::Node tokens = map.optional("tokens")) {  // {min: 1000, max: 4000}
    StrictMap range(tokens, file, "calibration provenance tokens", {"min", "max"});
    provenance.tokens = std::pair<long long, long long>{range.integer("min", 1, kMaxTokensInRange),
                                                        range.integer("max", 1, kMaxTokensInRange)};
  }
  if (YAML::Node ranks = map.optional("ranks")) {  // {min: 16, max: 16}
    StrictMap range(ranks, file, "calibration provenance ranks", {"min", "max"});
    provenance.ranks = std::pair{range.integer("min", 1, 1 << 20), range.integer("max", 1, 1 << 20)};
  }
  if (YAML::Node residuals = map.optional("residuals")) provenance.residuals = read_residuals(file, residuals);
  if (YAML::Node kept = map.optional("kept_prior")) {
    yaml::require_sequence(file, kept, "kept_prior");
    for (const YAML::Node& line : kept) provenance.kept_priors.push_back(yaml::scalar_string(file, line, "kept_prior"));
  }
  return provenance;
}

TierCalibration read_tier(const std::string& file, const YAML::Node& node, const std::string& tier) {
  StrictMap map(node, file, "calibration of tier '" + tier + "'", {"latency", "bandwidth"});
  return {optional_duration(map, "latency"), map.bandwidth_Bps("bandwidth")};
}

// A list of bands: [{latency: 3us, bandwidth: 11GB/s}, {from: 8MiB, latency: 120us, bandwidth: 4.3GB/s}]; the
// first covers every size from 0 (no `from`), each later one starts above the previous.
std::vector<SizeBand> read_bands(const std::string& file, const YAML::Node& node, const std::string& what) {
  yaml::require_sequence(file, node, what);
  if (node.size() == 0) yaml::fail(file, node, "'" + what + "' lists no bands");
  std::vector<SizeBand> bands;
  for (const YAML::Node& entry : node) {
    StrictMap map(entry, file, "a band of " + what, {"from", "latency", "bandwidth"});
    SizeBand band;
    if (bands.empty() && map.has("from")) {
      yaml::fail(file, map.required("from"),
                 "the first band of " + what + " covers every size from 0: leave 'from' out");
    }
    if (!bands.empty()) {
      band.from_bytes = map.bytes("from");
      if (band.from_bytes <= bands.back().from_bytes) {
        yaml::fail(file, map.required("from"), "bands of " + what + " must start at increasing sizes");
      }
    }
    band.latency_s = map.duration_s("latency");
    band.bandwidth_Bps = map.bandwidth_Bps("bandwidth");
    bands.push_back(band);
  }
  return bands;
}

void read_p2p(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration p2p", {"scale-up", "scale-out"});
  if (YAML::Node up = map.optional("scale-up")) calibration.p2p_scale_up = read_bands(file, up, "p2p scale-up");
  if (YAML::Node out = map.optional("scale-out")) calibration.p2p_scale_out = read_bands(file, out, "p2p scale-out");
}

void read_tiers(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration tiers", {"scale-up", "scale-out"});
  if (YAML::Node up = map.optional("scale-up")) calibration.scale_up = read_tier(file, up, "scale-up");
  if (YAML::Node out = map.optional("scale-out")) calibration.scale_out = read_tier(file, out, "scale-out");
}

void read_collectives(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration collectives",
                {"ring", "tree", "nvls", "nvls-tree", "p2p", "collnet-direct", "collnet-chain"});
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string algorithm = it->first.Scalar();
    StrictMap entry(it->second, file, "calibration of collective '" + algorithm + "'",
                    {"base_latency", "scale_up_step_latency", "scale_out_step_latency"});
    CollectiveCalibration collective;
    collective.base_latency_s = optional_duration(entry, "base_latency");
    collective.scale_up_step_latency_s = optional_duration(entry, "scale_up_step_latency");
    collective.scale_out_step_latency_s = optional_duration(entry, "scale_out_step_latency");
    calibration.collectives[algorithm] = collective;
  }
}

void read_protocols(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration protocols", {"LL", "LL128"});
  if (YAML::Node ll = map.optional("LL")) {
    calibration.ll_bus_Bps =
        StrictMap(ll, file, "calibration of protocol 'LL'", {"bandwidth"}).bandwidth_Bps("bandwidth");
  }
  if (YAML::Node ll128 = map.optional("LL128")) {
    calibration.ll128_bus_Bps =
        StrictMap(ll128, file, "calibration of protocol 'LL128'", {"bandwidth"}).bandwidth_Bps("bandwidth");
  }
}

void read_compute(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration compute", {"hbm_efficiency", "launch_overhead"});
  if (map.has("hbm_efficiency")) {
    double efficiency = map.number("hbm_efficiency", 0.0, 1.0);
    if (efficiency <= 0.0) yaml::fail(file, map.required("hbm_efficiency"), "'hbm_efficiency' must be in (0, 1]");
    calibration.hbm_efficiency = efficiency;
  }
  calibration.launch_overhead_s = optional_duration(map, "launch_overhead");
}

StepPartCalibration read_step_line(const std::string& file, const StrictMap& entry) {
  StepPartCalibration c;
  c.fixed_s = entry.duration_s("fixed");
  c.efficiency = entry.number("efficiency", 0.0, 1.0);
  if (c.efficiency <= 0.0) yaml::fail(file, entry.required("efficiency"), "'efficiency' must be in (0, 1]");
  return c;
}

// step: {projections: {fixed: 6us, efficiency: 0.85}, ...}: the parts named in kStepCalibrationParts, each with both.
void read_step(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  StrictMap map(node, file, "calibration step",
                {"attention", "projections", "mlp", "other", "lm_head", "attention_by_shape"});
  for (std::size_t p = 0; p < static_cast<std::size_t>(kStepCalibrationPartCount); ++p) {
    const std::string name = kStepCalibrationParts[p];
    const YAML::Node part = map.optional(name);
    if (!part) continue;
    StrictMap entry(part, file, "calibration of step part '" + name + "'", {"fixed", "efficiency"});
    calibration.step[p] = read_step_line(file, entry);
  }
  const YAML::Node shapes = map.optional("attention_by_shape");
  if (!shapes) return;
  if (!shapes.IsSequence())
    yaml::fail(file, shapes, "'attention_by_shape' must be a list of {head_dim, group, fixed, efficiency}");
  for (const YAML::Node& item : shapes) {
    StrictMap entry(item, file, "a step attention shape", {"head_dim", "group", "fixed", "efficiency"});
    StepAttentionShape shape;
    shape.head_dim = entry.integer("head_dim", 1, 1024);
    shape.group = entry.integer("group", 1, 1024);
    shape.line = read_step_line(file, entry);
    calibration.step_attention_shapes.push_back(shape);
  }
}

// attention: [{head_dim: 128, group: 4, fixed: 11us, split_per_chunk: 0.31us, bandwidth: 2.64TB/s}]
void read_attention_shapes(const std::string& file, const YAML::Node& node, Calibration& calibration) {
  if (!node.IsSequence())
    yaml::fail(file, node, "'attention' must be a list of {head_dim, group, fixed, split_per_chunk, bandwidth}");
  for (const YAML::Node& item : node) {
    StrictMap entry(item, file, "an attention shape", {"head_dim", "group", "fixed", "split_per_chunk", "bandwidth"});
    AttentionShapeCalibration shape;
    shape.head_dim = entry.integer("head_dim", 1, 1024);
    shape.group = entry.integer("group", 1, 1024);
    shape.fixed_s = entry.duration_s("fixed");
    shape.split_per_chunk_s = entry.duration_s("split_per_chunk");
    shape.bandwidth_Bps = entry.bandwidth_Bps("bandwidth");
    for (const AttentionShapeCalibration& other : calibration.attention_shapes) {
      if (other.head_dim == shape.head_dim && other.group == shape.group) {
        yaml::fail(file, item,
                   "attention shape head_dim " + std::to_string(shape.head_dim) + ", group " +
                       std::to_string(shape.group) + " given twice");
      }
    }
    calibration.attention_shapes.push_back(shape);
  }
}

}  // namespace

Calibration read_calibration(const std::string& file, const YAML::Node& node) {
  StrictMap map(
      node, file, "the calibration",
      {"provenance", "tiers", "collectives", "protocols", "in_switch", "p2p", "compute", "step", "attention"});
  Calibration calibration;
  calibration.provenance = read_provenance(file, map.required("provenance"));
  if (YAML::Node tiers = map.optional("tiers")) read_tiers(file, tiers, calibration);
  if (YAML::Node collectives = map.optional("collectives")) read_collectives(file, collectives, calibration);
  if (YAML::Node protocols = map.optional("protocols")) read_protocols(file, protocols, calibration);
  if (YAML::Node in_switch = map.optional("in_switch")) {
    calibration.in_switch_Bps =
        StrictMap(in_switch, file, "calibration in_switch", {"bandwidth"}).bandwidth_Bps("bandwidth");
  }
  if (YAML::Node p2p = map.optional("p2p")) read_p2p(file, p2p, calibration);
  if (YAML::Node compute = map.optional("compute")) read_compute(file, compute, calibration);
  if (YAML::Node step = map.optional("step")) read_step(file, step, calibration);
  if (YAML::Node attention = map.optional("attention")) read_attention_shapes(file, attention, calibration);
  return calibration;
}

}  // namespace treering::topologies
