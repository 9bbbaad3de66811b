// Reports of serving engines' benchmarks (engine_reports.hpp).
#include "engine_reports.hpp"

#include <filesystem>

#include "reporter.hpp"
#include "table.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/engine_consistency.hpp"

namespace treering::cli {
namespace {

std::vector<std::string> run_cells(const validate::EngineRun& run) {
  return {std::filesystem::path(run.file).filename().string(),
          run.engine,
          run.benchmark == "serve"  ? "mean TPOT"
          : run.benchmark == "step" ? "median step"
                                    : "latency",
          run.workload,
          std::to_string(run.batch),
          std::to_string(run.input_len),
          std::to_string(run.output_len),
          std::to_string(run.tp),
          topologies::format_duration(run.measured_s)};
}

std::string engine_step_text(const topologies::EngineStep& step) {
  std::string text = topologies::format_duration(step.fixed_s) + " + " +
                     topologies::format_duration(step.per_sequence_s) + " a sequence";
  if (step.gemm_flop_efficiency > 0) {
    text += ", GEMM FLOPs at " + format_percent(step.gemm_flop_efficiency, false) + " of peak on top of the weights";
  }
  if (step.per_collective_s > 0) {
    text += ", " + topologies::format_duration(step.per_collective_s) + " more for each TP collective";
  }
  if (step.per_layer_s > 0) text += ", " + topologies::format_duration(step.per_layer_s) + " more for each layer";
  if (step.paged_attention) {
    text += "; attention by vLLM's PagedAttention, every query head reading its K/V: v1 at " +
            format_percent(step.paged_attention->v1_bandwidth_efficiency, false) + ", v2 at " +
            format_percent(step.paged_attention->v2_bandwidth_efficiency, false) + " of HBM bandwidth";
    if (step.paged_attention->v1_shared_memory_per_multiprocessor_bytes > 0) {
      text += " (v1's occupancy from " +
              topologies::format_bytes(step.paged_attention->v1_shared_memory_per_multiprocessor_bytes) +
              " of shared memory a multiprocessor, graphs captured up to " +
              std::to_string(step.paged_attention->max_seq_len_to_capture) + " tokens)";
    }
  }
  return text;
}

void print_not_fitting(std::ostream& out, const std::vector<analysis::EngineRunCase>& not_fitting) {
  if (not_fitting.empty()) return;
  out << not_fitting.size() << " runs not predicted, their batch not fitting in memory, e.g. "
      << std::filesystem::path(not_fitting.front().run.file).filename().string() << ": "
      << not_fitting.front().predicted.memory_shortfall << '\n';
}

// Runs their sweep contradicts, one line each: the run, what contradicts it and the error of `error_by`'s prediction.
void print_contradicted(std::ostream& out, const std::vector<analysis::EngineRunCase>& contradicted,
                        const std::string& left_out_of, const std::string& error_by) {
  if (contradicted.empty()) return;
  out << contradicted.size() << (contradicted.size() == 1 ? " run" : " runs") << " left out of " << left_out_of
      << ", each taking over " << validate::slowdown_text(validate::kContradictedSlowdown)
      << " the time of a larger run of the same engine, model and TP (mismeasured):\n";
  for (const analysis::EngineRunCase& c : contradicted) {
    out << "  " << std::filesystem::path(c.run.file).filename().string() << " (" << c.run.workload << ", tp "
        << c.run.tp << ", batch " << c.run.batch << ", " << c.run.input_len << " in, " << c.run.output_len
        << " out): " << c.contradiction << "; error " << error_by << " " << format_percent(c.rel_error, true) << '\n';
  }
}

}  // namespace

void print_engine_validation(std::ostream& out, const analysis::EngineValidation& v) {
  Table table({"file", "engine", "quantity", "workload", "batch", "input", "output", "tp", "measured", "predicted",
               "error", "prefill", "step (middle)", "engine a step"});
  for (const analysis::EngineRunCase& c : v.cases) {
    std::vector<std::string> row = run_cells(c.run);
    row.push_back(topologies::format_duration(c.predicted.predicted_s));
    row.push_back(format_percent(c.rel_error, true));
    row.push_back(topologies::format_duration(c.predicted.prefill_s));
    row.push_back(topologies::format_duration(c.predicted.step_s));
    row.push_back(topologies::format_duration(c.predicted.engine_step_s));
    table.add_row(row);
  }
  table.print(out);
  for (const analysis::EngineRunCase& c : v.cases) {  // serving runs: the time to the first token beside it
    if (c.run.mean_ttft_s <= 0 || c.predicted.ttft_s <= 0) continue;
    out << std::filesystem::path(c.run.file).filename().string() << ": mean TTFT "
        << topologies::format_duration(c.run.mean_ttft_s) << ", predicted "
        << topologies::format_duration(c.predicted.ttft_s) << " (1.5 steps + its prompt's prefill; HTTP not counted)";
    if (c.run.median_itl_s > 0 && c.run.p99_itl_s > 0) {
      out << "; ITL median " << topologies::format_duration(c.run.median_itl_s) << ", predicted "
          << topologies::format_duration(c.predicted.median_itl_s) << "; p99 "
          << topologies::format_duration(c.run.p99_itl_s) << ", predicted "
          << topologies::format_duration(c.predicted.p99_itl_s);
    }
    out << '\n';
  }
  out << "\nprofile " << v.profile.name << ", engine work a step: "
      << (v.profile.engine_step ? engine_step_text(*v.profile.engine_step) : std::string("none")) << '\n'
      << v.cases.size() << " runs, median |error| " << format_percent(v.median_abs_rel_error, false) << "; "
      << v.inside_band << " of " << v.cases.size() << " ("
      << format_percent(static_cast<double>(v.inside_band) / static_cast<double>(v.cases.size()), false)
      << ") inside the profile's band of +/-" << format_percent(v.band, false) << '\n';
  print_not_fitting(out, v.not_fitting);
  print_contradicted(out, v.contradicted, "the figures", "predicted");
}

void print_engine_calibration(std::ostream& out, const analysis::EngineCalibration& c) {
  Table table({"file", "engine", "quantity", "workload", "batch", "input", "output", "tp", "measured", "error before",
               "error after"});
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    std::vector<std::string> row = run_cells(c.runs[i]);
    row.push_back(format_percent(c.fit.errors_before[i], true));
    row.push_back(format_percent(c.fit.errors_after[i], true));
    table.add_row(row);
  }
  table.print(out);
  out << "\nengine work a step (prior " << c.prior.name << "): " << engine_step_text(c.fit.step)
      << (c.fit.per_sequence_from_prior ? " (the slopes kept from the prior: too few runs to fit them)"
          : c.fit.per_sequence_fitted   ? ""
                                        : " (per sequence not fitted: one batch size, a negative slope, or the GEMM "
                                          "term took it)")
      << '\n'
      << c.runs.size() << " runs, median |error| " << format_percent(model::median_abs(c.fit.errors_before), false)
      << " before, " << format_percent(model::median_abs(c.fit.errors_after), false) << " after\n";
  if (!c.not_fitting.empty()) {
    out << c.not_fitting.size() << " runs left out, their batch not fitting in memory, e.g. "
        << std::filesystem::path(c.not_fitting.front().file).filename().string() << '\n';
  }
  print_contradicted(out, c.contradicted, "the fit", "with the prior");
}

}  // namespace treering::cli
