// Serving engines' benchmarks validated and calibrated (engine_runs_report.hpp).
#include "treering/analysis/engine_runs_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "treering/analysis/network_calibration.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/engine_consistency.hpp"

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

constexpr std::size_t kRunsForPercentileBand = 10;

std::vector<validate::EngineRun> read_runs(const std::vector<std::string>& files) {
  std::vector<validate::EngineRun> runs;
  for (const std::string& file : files) {
    for (validate::EngineRun& run : validate::read_engine_runs(file)) runs.push_back(std::move(run));
  }
  return runs;
}

// Each run's contradiction (validate::contradicted_runs), "" for the others.
std::vector<std::string> contradictions(const std::vector<validate::EngineRun>& runs) {
  std::vector<std::string> text(runs.size());
  for (const validate::ContradictedRun& c : validate::contradicted_runs(runs)) text[c.run] = c.text;
  return text;
}

// The runs of `files` predicted with `profile`: those that fit in memory and that their sweep does not contradict
// kept, the others apart (a run that does neither counts as not fitting, its contradiction kept with it).
struct SortedRuns {
  std::vector<EngineRunCase> kept, not_fitting, contradicted;
};

SortedRuns sorted_runs(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                       const std::vector<std::string>& files, const std::string& purpose) {
  SortedRuns sorted;
  const std::vector<validate::EngineRun> runs = read_runs(files);
  const std::vector<std::string> contradiction = contradictions(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const validate::EnginePrediction p = validate::predict_engine_run(spec, profile, runs[i]);
    const EngineRunCase c{runs[i], p, (p.predicted_s - runs[i].measured_s) / runs[i].measured_s, contradiction[i]};
    (!p.memory_shortfall.empty() ? sorted.not_fitting
     : !contradiction[i].empty() ? sorted.contradicted
                                 : sorted.kept)
        .push_back(c);
  }
  if (sorted.kept.empty()) {  // a sweep's largest run is never contradicted: some do not fit
    throw topologies::InputError(
        "no run to " + purpose + ": of " + std::to_string(runs.size()) + " runs, " +
        std::to_string(sorted.not_fitting.size()) + " need more memory than a GPU has at their batch (e.g. " +
        sorted.not_fitting.front().predicted.memory_shortfall + ")" +
        (sorted.contradicted.empty() ? ""
                                     : " and " + std::to_string(sorted.contradicted.size()) + " took over " +
                                           validate::slowdown_text(validate::kContradictedSlowdown) +
                                           " the time of a larger run of their setup"));
  }
  return sorted;
}

ordered_json run_json(const validate::EngineRun& run) {
  return {{"file", run.file},
          {"engine", run.engine},
          {"benchmark", run.benchmark},
          {"model", run.model},
          {"workload", run.workload},
          {"batch", run.batch},
          {"input_len", run.input_len},
          {"output_len", run.output_len},
          {"tp", run.tp},
          {"prompts", run.identical_sequences ? "identical" : "distinct"},
          {"measured_s", run.measured_s},
          {"iterations", run.latencies_s.size()},
          {"measured_ttft_s", run.mean_ttft_s > 0 ? ordered_json(run.mean_ttft_s) : ordered_json()},
          {"measured_median_itl_s", run.median_itl_s > 0 ? ordered_json(run.median_itl_s) : ordered_json()},
          {"measured_p99_itl_s", run.p99_itl_s > 0 ? ordered_json(run.p99_itl_s) : ordered_json()}};
}

ordered_json prediction_json(const validate::EnginePrediction& p) {
  return {{"predicted_s", p.predicted_s},
          {"prefill_s", p.prefill_s},
          {"step_s", p.step_s},
          {"engine_step_s", p.engine_step_s},
          {"gemm_flops_at_peak_s", p.gemm_flops_at_peak_s},
          {"attention_s", p.attention_s},
          {"decode_steps", p.decode_steps},
          {"middle_context", p.middle_context},
          {"ttft_s", p.ttft_s > 0 ? ordered_json(p.ttft_s) : ordered_json()},
          {"median_itl_s", p.median_itl_s > 0 ? ordered_json(p.median_itl_s) : ordered_json()},
          {"p99_itl_s", p.p99_itl_s > 0 ? ordered_json(p.p99_itl_s) : ordered_json()}};
}

// A contradicted run: the run, the prediction, its error (under `error_key`) and the larger run that contradicts it.
ordered_json contradicted_json(const EngineRunCase& c, const char* error_key) {
  ordered_json row = run_json(c.run);
  row["predicted"] = prediction_json(c.predicted);
  row[error_key] = c.rel_error;
  row["contradiction"] = c.contradiction;
  return row;
}

ordered_json engine_step_json(const topologies::EngineStep& step) {
  return {
      {"fixed_s", step.fixed_s},
      {"per_sequence_s", step.per_sequence_s},
      {"gemm_flop_efficiency",
       step.gemm_flop_efficiency > 0 ? ordered_json(step.gemm_flop_efficiency) : ordered_json()},
      {"per_collective_s", step.per_collective_s > 0 ? ordered_json(step.per_collective_s) : ordered_json()},
      {"per_layer_s", step.per_layer_s > 0 ? ordered_json(step.per_layer_s) : ordered_json()},
      {"paged_attention", step.paged_attention
                              ? ordered_json{{"v1_bandwidth_efficiency", step.paged_attention->v1_bandwidth_efficiency},
                                             {"v2_bandwidth_efficiency", step.paged_attention->v2_bandwidth_efficiency},
                                             {"v1_shared_memory_per_multiprocessor_bytes",
                                              step.paged_attention->v1_shared_memory_per_multiprocessor_bytes},
                                             {"max_seq_len_to_capture", step.paged_attention->max_seq_len_to_capture}}
                              : ordered_json()},
      {"source", step.source}};
}

ordered_json fit_json(const validate::EngineStepFit& fit) {
  ordered_json json = engine_step_json(fit.step);
  json["per_sequence_fitted"] = fit.per_sequence_fitted;
  json["per_sequence_from_prior"] = fit.per_sequence_from_prior;
  json["gemm_fitted"] = fit.gemm_fitted;
  json["per_collective_fitted"] = fit.per_collective_fitted;
  json["per_layer_fitted"] = fit.per_layer_fitted;
  json["gemm_from_prior"] = fit.gemm_from_prior;
  json["per_collective_from_prior"] = fit.per_collective_from_prior;
  json["per_layer_from_prior"] = fit.per_layer_from_prior;
  json["paged_v1_fitted"] = fit.paged_v1_fitted;
  json["paged_v2_fitted"] = fit.paged_v2_fitted;
  return json;
}

std::string percent_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100 * value);
  return text;
}

// What the fit kept from the prior rather than fitted, for the fitted profile's source.
std::string held_terms_text(const validate::EngineStepFit& fit, const std::string& prior_name) {
  std::string text;
  if (fit.per_sequence_from_prior) {
    text += "; per_sequence" + std::string(fit.step.gemm_flop_efficiency > 0 ? ", gemm_flop_efficiency" : "") +
            std::string(fit.step.per_collective_s > 0 ? ", per_collective" : "") +
            std::string(fit.step.per_layer_s > 0 ? ", per_layer" : "") + " kept from " + prior_name + " (fewer than " +
            std::to_string(validate::kRunsToFitSlope) + " runs)";
  } else if (!fit.per_sequence_fitted) {
    text += "; per_sequence not fitted (one batch size, a negative slope, or the GEMM term took it)";
  }
  if (fit.gemm_from_prior) text += "; gemm_flop_efficiency kept from " + prior_name + " (one GEMM size a sequence)";
  if (fit.per_collective_from_prior) text += "; per_collective kept from " + prior_name + " (one collective count)";
  if (fit.per_layer_from_prior) text += "; per_layer kept from " + prior_name + " (one model depth)";
  if (fit.step.paged_attention && !(fit.paged_v1_fitted && fit.paged_v2_fitted)) {
    text += "; PagedAttention efficiencies" + std::string(fit.paged_v1_fitted || fit.paged_v2_fitted ? " (one)" : "") +
            " kept from " + prior_name;
  }
  return text;
}

}  // namespace

bool engine_benchmark_files(const std::vector<std::string>& files) {
  const auto engine = std::count_if(files.begin(), files.end(), validate::is_engine_benchmark_file);
  if (engine == 0) return false;
  if (engine != static_cast<long>(files.size())) {
    throw topologies::InputError(
        "serving engines' benchmarks (vLLM latency or serve JSON, SGLang one-batch lines, LMDeploy or engine-table "
        "CSVs) go in a run of their own, "
        "without other measurements");
  }
  return true;
}

EngineValidation validate_engine_runs(const topologies::ClusterSpec& spec, const topologies::ImplProfile& profile,
                                      const std::vector<std::string>& files) {
  EngineValidation v{profile, {}, {}, {}, 0, profile.uncertainty.compute, 0};
  SortedRuns sorted = sorted_runs(spec, profile, files, "predict");
  v.cases = std::move(sorted.kept);
  v.not_fitting = std::move(sorted.not_fitting);
  v.contradicted = std::move(sorted.contradicted);
  std::vector<double> errors;
  for (const EngineRunCase& c : v.cases) {
    errors.push_back(c.rel_error);
    if (std::abs(c.rel_error) <= v.band) ++v.inside_band;
  }
  v.median_abs_rel_error = model::median_abs(errors);
  return v;
}

ordered_json engine_validation_json(const EngineValidation& v) {
  ordered_json cases = ordered_json::array();
  for (const EngineRunCase& c : v.cases) {
    ordered_json row = run_json(c.run);
    row["predicted"] = prediction_json(c.predicted);
    row["rel_error"] = c.rel_error;
    cases.push_back(row);
  }
  ordered_json not_fitting = ordered_json::array();
  for (const EngineRunCase& c : v.not_fitting) {
    ordered_json row = run_json(c.run);
    row["memory_shortfall"] = c.predicted.memory_shortfall;
    if (!c.contradiction.empty()) row["contradiction"] = c.contradiction;
    not_fitting.push_back(row);
  }
  ordered_json contradicted = ordered_json::array();
  for (const EngineRunCase& c : v.contradicted) contradicted.push_back(contradicted_json(c, "rel_error"));
  return {{"impl", v.profile.name},
          {"engine_step", v.profile.engine_step ? engine_step_json(*v.profile.engine_step) : ordered_json()},
          {"runs", cases},
          {"not_fitting", not_fitting},
          {"contradicted", contradicted},
          {"summary",
           {{"runs", v.cases.size()},
            {"not_fitting", v.not_fitting.size()},
            {"contradicted", v.contradicted.size()},
            {"median_abs_rel_error", v.median_abs_rel_error},
            {"band", v.band},
            {"inside_band", v.inside_band},
            {"inside_band_fraction", static_cast<double>(v.inside_band) / static_cast<double>(v.cases.size())}}}};
}

EngineCalibration calibrate_engine(const topologies::ClusterSpec& spec, const topologies::ImplProfile& prior,
                                   const std::vector<std::string>& files, const std::string& output_name) {
  EngineCalibration c;
  c.prior = prior;
  SortedRuns sorted = sorted_runs(spec, prior, files, "fit");
  for (EngineRunCase& run : sorted.kept) c.runs.push_back(std::move(run.run));
  for (EngineRunCase& run : sorted.not_fitting) c.not_fitting.push_back(std::move(run.run));
  c.contradicted = std::move(sorted.contradicted);
  c.fit = validate::fit_engine_step(spec, prior, c.runs);
  c.fit.step.source =
      "fitted to " + std::to_string(c.runs.size()) + " engine runs (" + topologies::format_list(files) + ") on " +
      spec.name + ", " + today_utc() + ": median |error| " + percent_text(model::median_abs(c.fit.errors_before)) +
      " before, " + percent_text(model::median_abs(c.fit.errors_after)) + " after" +
      held_terms_text(c.fit, prior.name) +
      (c.contradicted.empty()
           ? ""
           : "; " + std::to_string(c.contradicted.size()) + " runs left out, each over " +
                 validate::slowdown_text(validate::kContradictedSlowdown) + " the time of a larger run of its setup");
  c.fitted = prior;
  c.fitted.name = prior.name + "-engine-fitted";
  c.fitted.description =
      prior.description + "; engine work a step fitted to " + std::to_string(c.runs.size()) + " engine runs";
  c.fitted.engine_step = c.fit.step;
  // The band. The fit's residuals measure the engine term's spread on the GPU and runs it was fitted on; on another
  // GPU, or another release of its kernels, the kernels' own uncertainty (the default profile's: decode kernels at
  // 70-90 % of HBM) adds, independently: the two in quadrature. From 10 runs or more the residuals' 90th percentile
  // (one run in ten may fall outside, as the 80 % coverage asked of a band allows); from fewer their largest, and
  // never narrower than the prior's band (a few runs fitted exactly say little about the next). Example: p90 12.2 %
  // and the kernels' 12.5 %: sqrt(0.122^2 + 0.125^2) = 17.5 %.
  std::vector<double> residuals;
  for (double e : c.fit.errors_after) residuals.push_back(std::abs(e));
  const bool many = residuals.size() >= kRunsForPercentileBand;
  const double spread = model::percentile(residuals, many ? 0.9 : 1.0);
  const double kernels = topologies::default_impl_profile().uncertainty.compute;
  const double band = std::hypot(spread, kernels);
  if (many || band > prior.uncertainty.compute) {
    c.fitted.uncertainty.compute = many ? band : std::max(band, prior.uncertainty.compute);
    c.fitted.uncertainty.source = std::string("compute: the ") + (many ? "90th percentile" : "largest") + " |error| (" +
                                  percent_text(spread) + ") of the engine fit on " + std::to_string(c.runs.size()) +
                                  " runs and the kernels' " + percent_text(kernels) + " in quadrature; " +
                                  prior.uncertainty.source;
  }
  c.fitted.sources["engine_step"] = c.fit.step.source;
  const std::string text = topologies::impl_profile_yaml(c.fitted);
  topologies::load_impl_profile_text(text, output_name);  // what is written must load
  c.profile_yaml = "# Written by treering calibrate from " + topologies::format_list(files) + " (prior: " + prior.name +
                   ").\n" + text;
  return c;
}

ordered_json engine_calibration_json(const EngineCalibration& c) {
  ordered_json runs = ordered_json::array();
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    ordered_json row = run_json(c.runs[i]);
    row["rel_error_before"] = c.fit.errors_before[i];
    row["rel_error_after"] = c.fit.errors_after[i];
    runs.push_back(row);
  }
  ordered_json contradicted = ordered_json::array();
  for (const EngineRunCase& run : c.contradicted) {  // predicted with the prior: the run is not fitted
    contradicted.push_back(contradicted_json(run, "rel_error_before"));
  }
  return {{"prior", c.prior.name},
          {"engine_step", fit_json(c.fit)},
          {"runs", runs},
          {"contradicted", contradicted},
          {"summary",
           {{"runs", c.runs.size()},
            {"not_fitting", c.not_fitting.size()},
            {"contradicted", c.contradicted.size()},
            {"median_abs_rel_error_before", model::median_abs(c.fit.errors_before)},
            {"median_abs_rel_error_after", model::median_abs(c.fit.errors_after)}}}};
}

}  // namespace treering::analysis
