#include "treering/analysis/validate_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "treering/model/statistics.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"

namespace treering::analysis {

using nlohmann::ordered_json;

std::string calibration_label(bool calibrated, const validate::DecodeCase& c) {
  return !calibrated ? "none" : c.extrapolation.empty() ? "inside" : "OUTSIDE *";
}

namespace {

ordered_json decode_rows(const std::vector<validate::DecodeCase>& cases, bool calibrated) {
  ordered_json rows = ordered_json::array();
  for (const validate::DecodeCase& c : cases) {
    ordered_json predicted, errors;
    for (const auto& [engine, seconds] : c.predicted_s) {
      predicted[validate::to_string(engine)] = seconds;
      errors[validate::to_string(engine)] = c.error(engine);
    }
    rows.push_back({{"kind", "decode"},
                    {"algo", c.measured.algorithm},
                    {"workload", c.measured.workload},
                    {"batch", c.measured.batch},
                    {"seq_len", c.measured.seq_len},
                    {"ranks", c.measured.ranks},
                    {"measured_s", c.measured.latency_s},
                    {"noise", c.noise},
                    {"predicted_s", predicted},
                    {"rel_error", errors},
                    {"calibration", calibration_label(calibrated, c)},
                    {"extrapolation", c.extrapolation},
                    {"file", c.measured.file}});
  }
  return rows;
}

ordered_json to_json(const std::vector<validate::CaseResult>& cases, const std::vector<validate::ErrorSummary>& summary,
                     const std::optional<topologies::Calibration>& calibration) {
  ordered_json rows = ordered_json::array(), totals = ordered_json::array();
  for (const validate::CaseResult& c : cases) {
    ordered_json predicted, errors;
    for (const auto& [engine, seconds] : c.predicted_s) {
      predicted[validate::to_string(engine)] = seconds;
      errors[validate::to_string(engine)] = c.error(engine);
    }
    rows.push_back({{"kind", "collective"},
                    {"op", model::to_string(c.measured.op)},
                    {"ranks", c.measured.ranks},
                    {"size_bytes", c.measured.bytes},
                    {"measured_s", c.measured.time_s},
                    {"predicted_s", predicted},
                    {"rel_error", errors},
                    {"model_pick", c.how},
                    {"extrapolation",
                     calibration ? validate::extrapolation(*calibration, c.measured.bytes, c.measured.ranks) : ""},
                    {"file", c.measured.file},
                    {"line", c.measured.line}});
  }
  for (const validate::ErrorSummary& s : summary) {
    totals.push_back({{"engine", validate::to_string(s.engine)},
                      {"op", s.operation},
                      {"cases", s.cases},
                      {"median_abs_rel_error", s.median_abs_rel_error},
                      {"p90_abs_rel_error", s.p90_abs_rel_error},
                      {"max_abs_rel_error", s.max_abs_rel_error}});
    if (s.median_noise) totals.back()["median_noise"] = *s.median_noise;
  }
  return {{"cases", rows}, {"summary", totals}};
}

}  // namespace

namespace {

// A log that ran another NCCL release, with other constants, than the cluster names: say so once per release.
void warn_of_nccl_releases(const topologies::NcclVersion& cluster,
                           const std::vector<validate::CollectiveMeasurement>& measured,
                           std::vector<std::string>& warnings) {
  std::set<std::string> told;
  for (const auto& m : measured) {
    if (m.nccl_release.empty() || !told.insert(m.nccl_release).second) continue;
    topologies::NcclVersion ran;
    ran.minor = std::stoi(m.nccl_release.substr(2));  // "2.M.P", M and P of 1-3 digits (the reader's pattern)
    ran.patch = std::stoi(m.nccl_release.substr(m.nccl_release.rfind('.') + 1));
    const bool held = ran.minor >= topologies::kOldestNcclMinor && ran.minor <= topologies::kNewestNcclMinor;
    if (held && model::nccl_constants_epoch(ran) == model::nccl_constants_epoch(cluster)) continue;
    const std::string fix = held ? " (--set nccl_version=" + m.nccl_release + " predicts that release)"
                                 : " (treering holds 2." + std::to_string(topologies::kOldestNcclMinor) + " to 2." +
                                       std::to_string(topologies::kNewestNcclMinor) + ")";
    warnings.push_back(m.file + " ran NCCL " + m.nccl_release + "; the cluster's constants are NCCL " +
                       topologies::to_string(cluster) + "'s" + fix);
  }
}

// A decode run on the cpu backend (processes on CPU cores standing in for GPUs) predicted with a cluster whose
// attention no calibration measured: the cluster's figures are its GPUs' (an H100's 3.35 TB/s), not the CPU's,
// and the errors say how far a CPU is from them. Say so once per file.
void warn_of_backends(const topologies::ClusterSpec& spec, const std::vector<validate::DecodeMeasurement>& decodes,
                      std::vector<std::string>& warnings) {
  const bool attention_calibrated = spec.calibration && spec.calibration->provenance.tokens.has_value();
  if (attention_calibrated) return;
  std::set<std::string> told;
  for (const auto& m : decodes) {
    if (m.backend != "cpu" || !told.insert(m.file).second) continue;
    std::string gpus;
    for (const auto& [name, model] : spec.gpu_models) gpus += (gpus.empty() ? "" : ", ") + name;
    warnings.push_back(m.file + " ran on the cpu backend (CPU processes standing in for GPUs), and " + spec.name +
                       " describes GPUs (" + gpus +
                       ") its attention was not calibrated on: the errors compare that CPU "
                       "with them. Validate against a cluster calibrated on the same run's benchmarks (treering "
                       "calibrate BENCH.json --cluster ... -o local.yaml; make validate-local does it)");
  }
}

}  // namespace

ValidateReport validate_measurements(const topologies::Topology& topology, const std::vector<std::string>& files,
                                     const std::vector<validate::Engine>& engines) {
  std::vector<validate::CollectiveMeasurement> measured;
  std::vector<validate::DecodeMeasurement> decodes;
  for (const std::string& file : files) {
    if (validate::is_decode_file(file)) {
      const auto rows = validate::read_decode_measurements(file);
      decodes.insert(decodes.end(), rows.begin(), rows.end());
      continue;
    }
    const auto rows = validate::read_collective_measurements(file);
    measured.insert(measured.end(), rows.begin(), rows.end());
  }
  ValidateReport report;
  report.cases = validate::predict_cases(topology, measured, engines);
  report.decodes = validate::predict_decodes(topology, decodes, engines);
  if (const auto& calibration = topology.spec().calibration) {  // predictions outside what it was fitted on
    int outside = 0;
    for (const auto& c : report.cases)
      outside += validate::extrapolation(*calibration, c.measured.bytes, c.measured.ranks).empty() ? 0 : 1;
    if (outside > 0) {
      report.warnings.push_back(std::to_string(outside) + " of " + std::to_string(report.cases.size()) +
                                " cases lie outside what the calibration was fitted on");
    }
  }
  warn_of_nccl_releases(topology.spec().nccl_version, measured, report.warnings);
  warn_of_backends(topology.spec(), decodes, report.warnings);
  report.summary = validate::summarise(report.cases, engines);
  const auto decode_summary = validate::summarise(report.decodes, engines);
  report.summary.insert(report.summary.end(), decode_summary.begin(), decode_summary.end());
  return report;
}

ordered_json validate_json(const topologies::Topology& topology, const ValidateReport& report) {
  ordered_json json = to_json(report.cases, report.summary, topology.spec().calibration);
  for (const auto& row : decode_rows(report.decodes, topology.spec().calibration.has_value()))
    json["cases"].push_back(row);
  return json;
}

}  // namespace treering::analysis

namespace treering::analysis {

std::optional<std::string> gross_error(const ValidateReport& report, const std::vector<validate::Engine>& engines,
                                       double max_factor) {
  std::map<std::string, std::vector<double>> ratios;  // "model, ring" -> predicted / measured per case
  std::optional<std::string> invalid;
  auto add = [&](const std::string& group, const std::string& what, double measured_s, double predicted_s) {
    const double ratio = predicted_s / measured_s;
    if (!invalid && (!std::isfinite(ratio) || !(ratio > 0))) {
      std::ostringstream message;
      message << what << ": the prediction (" << predicted_s << " s) or the measurement (" << measured_s
              << " s) is not a finite positive time";
      invalid = message.str();
    }
    ratios[group].push_back(ratio);
  };
  for (validate::Engine engine : engines) {
    const std::string name = validate::to_string(engine);
    for (const validate::DecodeCase& c : report.decodes) {
      add(name + ", " + c.measured.algorithm,
          name + ", " + c.measured.algorithm + " at " + std::to_string(c.measured.seq_len) + " tokens",
          c.measured.latency_s, c.predicted_s.at(engine));
    }
    for (const validate::CaseResult& c : report.cases) {
      const std::string op = model::to_string(c.measured.op);
      add(name + ", " + op, name + ", " + op + " of " + topologies::format_bytes(c.measured.bytes), c.measured.time_s,
          c.predicted_s.at(engine));
    }
  }
  if (invalid) return invalid;
  for (auto& [group, values] : ratios) {
    const double median = model::median(values);
    if (max_factor > 0 && (median > max_factor || median < 1 / max_factor)) {
      std::ostringstream message;
      message << group << ": the median case is predicted " << median
              << "x the measured time, off by more than --max-factor " << max_factor;
      return message.str();
    }
  }
  return std::nullopt;
}

}  // namespace treering::analysis
