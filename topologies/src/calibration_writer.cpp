// with_calibration (calibration_yaml.hpp): the cluster file with a new `calibration:` section, in the schema's units,
// written with yaml-cpp's emitter as the other writers are; read back by calibration_loader.cpp.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "treering/topologies/calibration_yaml.hpp"

namespace treering::topologies {
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

std::string whole_bytes(double bytes) { return std::to_string(std::llround(bytes)) + "B"; }

// The column a key's comment starts at, as the file has always been written: "  p2p:" and 27 spaces, then "# ...".
constexpr int kCommentColumn = 33;

// `key:` (at `indent` spaces) followed by its comment at kCommentColumn; the value comes next.
void key_with_comment(YAML::Emitter& out, int indent, const std::string& key, const std::string& comment) {
  out.SetPreCommentIndent(kCommentColumn - indent - static_cast<int>(key.size()) - 1);
  out << YAML::Key << key << YAML::Value << YAML::Comment(comment);
}

// {min: A, max: B} on one line.
template <typename Value>
void min_max(YAML::Emitter& out, const std::string& key, const Value& low, const Value& high) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "min" << YAML::Value << low
      << YAML::Key << "max" << YAML::Value << high << YAML::EndMap;
}

// The figures of a fit, each when it has one.
void fit_figures(YAML::Emitter& out, const CalibrationProvenance& p) {
  for (const auto& [key, value] : {std::pair{"r_squared", p.r_squared},
                                   {"median_abs_rel_error", p.median_abs_rel_error},
                                   {"max_abs_rel_error", p.max_abs_rel_error},
                                   {"attention_max_abs_rel_error", p.attention_max_abs_rel_error}}) {
    if (value) out << YAML::Key << key << YAML::Value << number(*value);
  }
}

void provenance(YAML::Emitter& out, const CalibrationProvenance& p) {
  out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap << YAML::Key << "inputs" << YAML::Value
      << YAML::Flow << YAML::BeginSeq;
  for (const std::string& input : p.inputs) out << YAML::DoubleQuoted << input;
  out << YAML::EndSeq << YAML::Key << "date" << YAML::Value << YAML::DoubleQuoted << p.date << YAML::Key << "tool"
      << YAML::Value << YAML::DoubleQuoted << p.tool;
  fit_figures(out, p);
  if (p.sizes_bytes) min_max(out, "sizes", whole_bytes(p.sizes_bytes->first), whole_bytes(p.sizes_bytes->second));
  if (!p.residuals.empty()) {
    key_with_comment(out, 4, "residuals", "the fit's largest |error| at each size it measured: the band there");
    out << YAML::BeginSeq;
    for (const auto& [bytes, error] : p.residuals) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "size" << YAML::Value << whole_bytes(bytes) << YAML::Key
          << "error" << YAML::Value << number(error) << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!p.kept_priors.empty()) {
    key_with_comment(out, 4, "kept_prior", "parameters the fit did not improve on, left at their priors");
    out << YAML::BeginSeq;
    for (const std::string& line : p.kept_priors) out << YAML::DoubleQuoted << line;
    out << YAML::EndSeq;
  }
  if (p.ranks) min_max(out, "ranks", p.ranks->first, p.ranks->second);
  if (p.p2p_sizes_bytes)
    min_max(out, "p2p_sizes", whole_bytes(p.p2p_sizes_bytes->first), whole_bytes(p.p2p_sizes_bytes->second));
  if (p.tokens) min_max(out, "tokens", p.tokens->first, p.tokens->second);
  out << YAML::EndMap;
}

void tier(YAML::Emitter& out, const char* name, const TierCalibration& t) {
  out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (t.latency_s) out << YAML::Key << "latency" << YAML::Value << microseconds(*t.latency_s);
  out << YAML::Key << "bandwidth" << YAML::Value << gigabytes_per_second(t.bandwidth_Bps) << YAML::EndMap;
}

void bands(YAML::Emitter& out, const char* name, const std::vector<SizeBand>& list) {
  out << YAML::Key << name << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < list.size(); ++i) {
    out << YAML::Flow << YAML::BeginMap;
    if (i > 0) out << YAML::Key << "from" << YAML::Value << whole_bytes(list[i].from_bytes);
    out << YAML::Key << "latency" << YAML::Value << microseconds(list[i].latency_s) << YAML::Key << "bandwidth"
        << YAML::Value << gigabytes_per_second(list[i].bandwidth_Bps) << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// {bandwidth: X} on one line.
void bandwidth_only(YAML::Emitter& out, const char* name, double Bps) {
  out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "bandwidth" << YAML::Value
      << gigabytes_per_second(Bps) << YAML::EndMap;
}

// The network's figures: tiers, collectives' latencies, protocols, in-switch reduction, send/recv bands.
void network(YAML::Emitter& out, const Calibration& c) {
  if (c.scale_up || c.scale_out) {
    out << YAML::Key << "tiers" << YAML::Value << YAML::BeginMap;
    if (c.scale_up) tier(out, "scale-up", *c.scale_up);
    if (c.scale_out) tier(out, "scale-out", *c.scale_out);
    out << YAML::EndMap;
  }
  if (!c.collectives.empty()) {
    out << YAML::Key << "collectives" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, values] : c.collectives) {
      out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [key, value] : {std::pair{"base_latency", values.base_latency_s},
                                       {"scale_up_step_latency", values.scale_up_step_latency_s},
                                       {"scale_out_step_latency", values.scale_out_step_latency_s}}) {
        if (value) out << YAML::Key << key << YAML::Value << microseconds(*value);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  if (c.ll_bus_Bps || c.ll128_bus_Bps) {
    key_with_comment(out, 2, "protocols", "the most bus bandwidth NCCL's LL / LL128 reach across nodes");
    out << YAML::BeginMap;
    if (c.ll_bus_Bps) bandwidth_only(out, "LL", *c.ll_bus_Bps);
    if (c.ll128_bus_Bps) bandwidth_only(out, "LL128", *c.ll128_bus_Bps);
    out << YAML::EndMap;
  }
  if (c.in_switch_Bps) {
    bandwidth_only(out, "in_switch", *c.in_switch_Bps);
    out.SetPreCommentIndent(3);
    out << YAML::Comment("all-reduce rate of in-switch reduction (NVLS)");
  }
  if (!c.p2p_scale_up.empty() || !c.p2p_scale_out.empty()) {
    key_with_comment(out, 2, "p2p", "measured send/recv by message size: latency + bytes / bandwidth");
    out << YAML::BeginMap;
    if (!c.p2p_scale_up.empty()) bands(out, "scale-up", c.p2p_scale_up);
    if (!c.p2p_scale_out.empty()) bands(out, "scale-out", c.p2p_scale_out);
    out << YAML::EndMap;
  }
}

void step(YAML::Emitter& out, const Calibration& c) {
  key_with_comment(out, 2, "step",
                   "a decode step's parts as measured: per layer fixed + bytes / (rated HBM x efficiency)");
  out << YAML::BeginMap;
  for (int i = 0; i < kStepCalibrationPartCount; ++i) {
    const StepPartCalibration& part = c.step[static_cast<std::size_t>(i)];
    if (part.efficiency <= 0) continue;
    out << YAML::Key << kStepCalibrationParts[i] << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "fixed"
        << YAML::Value << microseconds(part.fixed_s) << YAML::Key << "efficiency" << YAML::Value
        << number(part.efficiency) << YAML::EndMap;
  }
  if (!c.step_attention_shapes.empty()) {
    key_with_comment(out, 4, "attention_by_shape", "the attention kernel's line for each shape it measured");
    out << YAML::BeginSeq;
    for (const StepAttentionShape& shape : c.step_attention_shapes) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "head_dim" << YAML::Value << shape.head_dim << YAML::Key
          << "group" << YAML::Value << shape.group << YAML::Key << "fixed" << YAML::Value
          << microseconds(shape.line.fixed_s) << YAML::Key << "efficiency" << YAML::Value
          << number(shape.line.efficiency) << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

// The compute figures: HBM efficiency and launch overhead, the attention kernel by shape, the decode step's parts.
void compute(YAML::Emitter& out, const Calibration& c) {
  if (c.hbm_efficiency || c.launch_overhead_s) {
    out << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
    if (c.hbm_efficiency) out << YAML::Key << "hbm_efficiency" << YAML::Value << number(*c.hbm_efficiency);
    if (c.launch_overhead_s) out << YAML::Key << "launch_overhead" << YAML::Value << microseconds(*c.launch_overhead_s);
    out << YAML::EndMap;
  }
  if (!c.attention_shapes.empty()) {
    key_with_comment(out, 2, "attention",
                     "the split-KV kernel by shape: fixed + split per chunk x chunks + bytes / bandwidth");
    out << YAML::BeginSeq;
    for (const AttentionShapeCalibration& shape : c.attention_shapes) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "head_dim" << YAML::Value << shape.head_dim << YAML::Key
          << "group" << YAML::Value << shape.group << YAML::Key << "fixed" << YAML::Value << microseconds(shape.fixed_s)
          << YAML::Key << "split_per_chunk" << YAML::Value << microseconds(shape.split_per_chunk_s) << YAML::Key
          << "bandwidth" << YAML::Value << gigabytes_per_second(shape.bandwidth_Bps) << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (std::any_of(c.step.begin(), c.step.end(), [](const auto& part) { return part.efficiency > 0; })) step(out, c);
}

}  // namespace

std::string calibration_yaml(const Calibration& calibration) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  key_with_comment(out, 0, "calibration", "written by `treering calibrate`");
  out << YAML::BeginMap;
  provenance(out, calibration.provenance);
  network(out, calibration);
  compute(out, calibration);
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string with_calibration(const std::string& base_yaml, const Calibration& calibration) {
  std::istringstream in(base_yaml);
  std::ostringstream out;
  bool skipping = false;
  for (std::string line; std::getline(in, line);) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#';
    if (top_level) skipping = line.rfind("calibration:", 0) == 0;  // the old section, up to the next top-level key
    if (!skipping) out << line << '\n';
  }
  return out.str() + calibration_yaml(calibration);
}

}  // namespace treering::topologies
