#include "attention_reports.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "treering/analysis/calibration_runs.hpp"
#include "treering/analysis/csv.hpp"
#include "table.hpp"
#include "treering/model/attention_kernel.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

// "11.5 us ± 0.4", or the value alone where the fit estimated no error (held at 0, or no points to spare).
std::string with_error(const std::string& value, double error, const std::string& error_text) {
  return error < 0 ? value : value + " ± " + error_text;
}

std::string shape_name(int head_dim, int group) {
  return "head dim " + std::to_string(head_dim) + ", group " + std::to_string(group);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void print_attention_fit(std::ostream& out, const std::vector<validate::AttentionShapeFit>& fits,
                         double rated_hbm_Bps) {
  Table table({"attention shape", "points", "tokens", "chunks", "fixed", "split per chunk", "bandwidth", "of rated HBM",
               "median |error|", "worst"});
  for (const validate::AttentionShapeFit& f : fits) {
    const topologies::AttentionShapeCalibration& c = f.line;
    table.add_row(
        {shape_name(c.head_dim, c.group) + " (" + joined(f.workloads) + ")", std::to_string(f.points),
         topologies::format_token_count(f.tokens.first) + "-" + topologies::format_token_count(f.tokens.second),
         std::to_string(f.chunks.first) + "-" + std::to_string(f.chunks.second),
         with_error(topologies::format_duration(c.fixed_s), f.fixed_error_s,
                    topologies::format_duration(f.fixed_error_s)),
         with_error(topologies::format_duration(c.split_per_chunk_s), f.split_error_s,
                    topologies::format_duration(f.split_error_s)),
         with_error(topologies::format_bandwidth(c.bandwidth_Bps), f.bandwidth_error_Bps,
                    topologies::format_bandwidth(f.bandwidth_error_Bps)),
         format_percent(c.bandwidth_Bps / rated_hbm_Bps), format_percent(f.median_abs_rel_error),
         format_percent(f.max_abs_rel_error)});
  }
  table.print(out);
  out << "attention by shape: time = fixed + split per chunk x the kernel's chunks (one wave of CTAs, "
      << model::kSplitKvResidentCtas
      << " per SM) + bytes read / bandwidth; no ± where the points leave no error to estimate or a term is held at 0.\n"
      << "Shapes, batches and token counts outside those measured are extrapolations; other shapes keep the HBM "
         "efficiency above.\n";
}

double print_attention_validation(std::ostream& out, const topologies::ClusterSpec& spec,
                                  const std::vector<std::string>& files, const std::string& format) {
  Table table({"workload", "shape", "tokens", "measured", "model", "error", "calibrated"});
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string csv = "workload,head_dim,group,tokens,measured_s,predicted_s,rel_error,shape_calibrated\n";
  std::vector<double> errors;
  const auto& shapes =
      spec.calibration ? spec.calibration->attention_shapes : std::vector<topologies::AttentionShapeCalibration>{};
  for (const validate::AttentionMeasurement& m : read_attention_files(files, {})) {
    const model::Workload& w = model::find_workload(m.workload);
    const int group = model::split_kv_shape(w).group;
    const bool calibrated = model::find_attention_shape(shapes, w) != nullptr;
    const double predicted_s = validate::predict_attention_s(spec, m);
    errors.push_back((predicted_s - m.time_s) / m.time_s);
    table.add_row({m.workload, shape_name(w.head_dim, group), topologies::format_token_count(m.tokens),
                   topologies::format_duration(m.time_s), topologies::format_duration(predicted_s),
                   format_percent(errors.back(), true), calibrated ? "yes" : "no (prior)"});
    CsvRecord record;
    record.text(m.workload)
        .integer(w.head_dim)
        .integer(group)
        .integer(m.tokens)
        .number(m.time_s)
        .number(predicted_s)
        .number(errors.back());
    csv += record.text(calibrated ? "true" : "false").line();
    rows.push_back({{"kind", "attention"},
                    {"workload", m.workload},
                    {"head_dim", w.head_dim},
                    {"group", group},
                    {"tokens", m.tokens},
                    {"measured_s", m.time_s},
                    {"predicted_s", predicted_s},
                    {"rel_error", errors.back()},
                    {"shape_calibrated", calibrated},
                    {"file", m.file}});
  }
  std::vector<double> magnitudes;
  for (double e : errors) magnitudes.push_back(std::fabs(e));
  const double median = model::median(magnitudes), worst = *std::max_element(magnitudes.begin(), magnitudes.end());
  if (format == "json") {
    out << nlohmann::ordered_json{{"cases", rows},
                                  {"summary",
                                   {{"kernels", errors.size()},
                                    {"median_abs_rel_error", median},
                                    {"max_abs_rel_error", worst}}}}
               .dump(2)
        << '\n';
  } else if (format == "csv") {
    out << csv;
  } else {
    table.print(out);
    out << "model vs measured attention: median |error| " << format_percent(median) << ", worst "
        << format_percent(worst) << " over " << errors.size() << " kernels\n";
  }
  return median;
}

}  // namespace treering::cli
