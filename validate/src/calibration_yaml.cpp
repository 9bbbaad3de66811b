// with_calibration (calibrate.hpp): the cluster file with a new `calibration:` section, in the schema's units.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "treering/validate/calibrate.hpp"

namespace treering::validate {
namespace {

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6gus", seconds * 1e6);
  return text;
}

std::string gigabytes_per_second(double Bps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6gGB/s", Bps / 1e9);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

void tier(std::ostringstream& out, const char* name, const topologies::TierCalibration& t) {
  out << "    " << name << ": {";
  if (t.latency_s) out << "latency: " << microseconds(*t.latency_s) << ", ";
  out << "bandwidth: " << gigabytes_per_second(t.bandwidth_Bps) << "}\n";
}

void bands(std::ostringstream& out, const char* name, const std::vector<topologies::SizeBand>& list) {
  out << "    " << name << ":\n";
  for (size_t i = 0; i < list.size(); ++i) {
    out << "      - {";
    if (i > 0) out << "from: " << std::llround(list[i].from_bytes) << "B, ";
    out << "latency: " << microseconds(list[i].latency_s) << ", bandwidth: " << gigabytes_per_second(list[i].bandwidth_Bps) << "}\n";
  }
}

std::string section(const topologies::Calibration& c) {
  std::ostringstream out;
  const topologies::CalibrationProvenance& p = c.provenance;
  out << "calibration:                     # written by `treering calibrate`\n  provenance:\n    inputs: [";
  for (size_t i = 0; i < p.inputs.size(); ++i) out << (i ? ", " : "") << '"' << p.inputs[i] << '"';
  out << "]\n    date: \"" << p.date << "\"\n    tool: \"" << p.tool << "\"\n";
  if (p.r_squared) out << "    r_squared: " << number(*p.r_squared) << '\n';
  if (p.median_abs_rel_error) out << "    median_abs_rel_error: " << number(*p.median_abs_rel_error) << '\n';
  if (p.max_abs_rel_error) out << "    max_abs_rel_error: " << number(*p.max_abs_rel_error) << '\n';
  if (p.attention_max_abs_rel_error) out << "    attention_max_abs_rel_error: " << number(*p.attention_max_abs_rel_error) << '\n';
  if (p.sizes_bytes) {  // whole bytes, exactly
    out << "    sizes: {min: " << std::llround(p.sizes_bytes->first) << "B, max: " << std::llround(p.sizes_bytes->second) << "B}\n";
  }
  if (!p.residuals.empty()) {
    out << "    residuals:                   # the fit's largest |error| at each size it measured: the band there\n";
    for (const auto& [bytes, error] : p.residuals) out << "      - {size: " << std::llround(bytes) << "B, error: " << number(error) << "}\n";
  }
  if (!p.kept_priors.empty()) {
    out << "    kept_prior:                  # parameters the fit did not improve on, left at their priors\n";
    for (const std::string& line : p.kept_priors) out << "      - \"" << line << "\"\n";
  }
  if (p.ranks) out << "    ranks: {min: " << p.ranks->first << ", max: " << p.ranks->second << "}\n";
  if (p.p2p_sizes_bytes) {
    out << "    p2p_sizes: {min: " << std::llround(p.p2p_sizes_bytes->first) << "B, max: " << std::llround(p.p2p_sizes_bytes->second)
        << "B}\n";
  }
  if (p.tokens) out << "    tokens: {min: " << p.tokens->first << ", max: " << p.tokens->second << "}\n";
  if (c.scale_up || c.scale_out) {
    out << "  tiers:\n";
    if (c.scale_up) tier(out, "scale-up", *c.scale_up);
    if (c.scale_out) tier(out, "scale-out", *c.scale_out);
  }
  if (!c.collectives.empty()) {
    out << "  collectives:\n";
    for (const auto& [name, values] : c.collectives) {
      out << "    " << name << ": {";
      const char* separator = "";
      for (const auto& [key, value] : {std::pair{"base_latency", values.base_latency_s},
                                       {"scale_up_step_latency", values.scale_up_step_latency_s},
                                       {"scale_out_step_latency", values.scale_out_step_latency_s}}) {
        if (value) {
          out << separator << key << ": " << microseconds(*value);
          separator = ", ";
        }
      }
      out << "}\n";
    }
  }
  if (c.ll_bus_Bps || c.ll128_bus_Bps) {
    out << "  protocols:                     # the most bus bandwidth NCCL's LL / LL128 reach across nodes\n";
    if (c.ll_bus_Bps) out << "    LL: {bandwidth: " << gigabytes_per_second(*c.ll_bus_Bps) << "}\n";
    if (c.ll128_bus_Bps) out << "    LL128: {bandwidth: " << gigabytes_per_second(*c.ll128_bus_Bps) << "}\n";
  }
  if (c.in_switch_Bps) {
    out << "  in_switch: {bandwidth: " << gigabytes_per_second(*c.in_switch_Bps) << "}   # all-reduce rate of in-switch reduction (NVLS)\n";
  }
  if (!c.p2p_scale_up.empty() || !c.p2p_scale_out.empty()) {
    out << "  p2p:                           # measured send/recv by message size: latency + bytes / bandwidth\n";
    if (!c.p2p_scale_up.empty()) bands(out, "scale-up", c.p2p_scale_up);
    if (!c.p2p_scale_out.empty()) bands(out, "scale-out", c.p2p_scale_out);
  }
  if (c.hbm_efficiency || c.launch_overhead_s) {
    out << "  compute:\n";
    if (c.hbm_efficiency) out << "    hbm_efficiency: " << number(*c.hbm_efficiency) << '\n';
    if (c.launch_overhead_s) out << "    launch_overhead: " << microseconds(*c.launch_overhead_s) << '\n';
  }
  if (!c.attention_shapes.empty()) {
    out << "  attention:                     # the split-KV kernel by shape: fixed + split per chunk x chunks + bytes / bandwidth\n";
    for (const topologies::AttentionShapeCalibration& shape : c.attention_shapes) {
      out << "    - {head_dim: " << shape.head_dim << ", group: " << shape.group << ", fixed: " << microseconds(shape.fixed_s)
          << ", split_per_chunk: " << microseconds(shape.split_per_chunk_s) << ", bandwidth: " << gigabytes_per_second(shape.bandwidth_Bps) << "}\n";
    }
  }
  if (std::any_of(c.step.begin(), c.step.end(), [](const auto& part) { return part.efficiency > 0; })) {
    out << "  step:                          # a decode step's parts as measured: per layer fixed + bytes / (rated HBM x efficiency)\n";
    for (int i = 0; i < topologies::kStepCalibrationPartCount; ++i) {
      const topologies::StepPartCalibration& part = c.step[static_cast<std::size_t>(i)];
      if (part.efficiency <= 0) continue;
      out << "    " << topologies::kStepCalibrationParts[i] << ": {fixed: " << microseconds(part.fixed_s)
          << ", efficiency: " << number(part.efficiency) << "}\n";
    }
    if (!c.step_attention_shapes.empty()) out << "    attention_by_shape:          # the attention kernel's line for each shape it measured\n";
    for (const topologies::StepAttentionShape& shape : c.step_attention_shapes) {
      out << "      - {head_dim: " << shape.head_dim << ", group: " << shape.group << ", fixed: " << microseconds(shape.line.fixed_s)
          << ", efficiency: " << number(shape.line.efficiency) << "}\n";
    }
  }
  return out.str();
}

}  // namespace

std::string extrapolation(const topologies::Calibration& calibration, double bytes, int ranks) {
  const topologies::CalibrationProvenance& p = calibration.provenance;
  std::ostringstream why;
  if (p.sizes_bytes && (bytes < p.sizes_bytes->first || bytes > p.sizes_bytes->second)) {
    why << std::llround(bytes) << " B is outside the calibrated sizes " << std::llround(p.sizes_bytes->first) << "-"
        << std::llround(p.sizes_bytes->second) << " B";
  }
  if (p.ranks && (ranks < p.ranks->first || ranks > p.ranks->second)) {
    why << (why.tellp() > 0 ? "; " : "") << ranks << " ranks is outside the calibrated " << p.ranks->first << "-"
        << p.ranks->second;
  }
  return why.str();
}

std::string with_calibration(const std::string& base_yaml, const topologies::Calibration& calibration) {
  std::istringstream in(base_yaml);
  std::ostringstream out;
  bool skipping = false;
  for (std::string line; std::getline(in, line);) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#';
    if (top_level) skipping = line.rfind("calibration:", 0) == 0;  // the old section, up to the next top-level key
    if (!skipping) out << line << '\n';
  }
  return out.str() + section(calibration);
}

}  // namespace treering::validate
