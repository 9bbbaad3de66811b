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

}  // namespace

void print_attention_fit(std::ostream& out, const std::vector<validate::AttentionShapeFit>& fits,
                         double rated_hbm_Bps) {
  Table table({"attention shape", "points", "tokens", "chunks", "fixed", "split per chunk", "bandwidth", "of rated HBM",
               "median |error|", "worst"});
  for (const validate::AttentionShapeFit& f : fits) {
    const topologies::AttentionShapeCalibration& c = f.line;
    table.add_row(
        {shape_name(c.head_dim, c.group) + " (" + topologies::format_list(f.workloads) + ")", std::to_string(f.points),
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

void print_attention_validation(std::ostream& out, const AttentionValidation& validation) {
  Table table({"workload", "shape", "tokens", "measured", "model", "error", "calibrated"});
  for (const AttentionCheck& c : validation.kernels) {
    table.add_row({c.measured.workload, shape_name(c.head_dim, c.group),
                   topologies::format_token_count(c.measured.tokens), topologies::format_duration(c.measured.time_s),
                   topologies::format_duration(c.predicted_s), format_percent(c.rel_error, true),
                   c.shape_calibrated ? "yes" : "no (prior)"});
  }
  table.print(out);
  out << "model vs measured attention: median |error| " << format_percent(validation.median_abs_rel_error) << ", worst "
      << format_percent(validation.max_abs_rel_error) << " over " << validation.kernels.size() << " kernels\n";
}

}  // namespace treering::cli
