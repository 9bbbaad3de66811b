// treering calibrate: the arguments, and the report of a cluster's calibration from benchmarks (the fits are the
// analysis library's: calibration_runs.hpp); timed decodes are calibrate_overheads.hpp's.
#include <iostream>

#include "attention_reports.hpp"
#include "engine_reports.hpp"
#include "calibrate_overheads.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "treering/analysis/calibration_runs.hpp"
#include "treering/analysis/engine_runs_report.hpp"
#include "step_reports.hpp"
#include "table.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct CalibrateArgs {
  ClusterArgs cluster;
  std::vector<std::string> files;
  std::string output;
  std::string impl;              // timings: the prior profile
  std::vector<std::string> fit;  // timings: the overheads to fit
  OutputFormat format = OutputFormat::table;
  std::string tokens;  // attention benchmarks: fit only these token counts
};

std::string percent(double value) { return format_percent(value); }

// One row per band: "p2p scale-up, from 8 MiB" -> "100 us + n / 4.40 GB/s".
void add_band_rows(Table& table, const std::string& what, const std::vector<topologies::SizeBand>& bands) {
  for (size_t i = 0; i < bands.size(); ++i) {
    const std::string where = bands.size() == 1 ? ""
                              : i == 0          ? ", below " + topologies::format_bytes(bands[1].from_bytes)
                                                : ", from " + topologies::format_bytes(bands[i].from_bytes);
    table.add_row({what + where, topologies::format_duration(bands[i].latency_s) + " + n / " +
                                     topologies::format_bandwidth(bands[i].bandwidth_Bps)});
  }
}

// The cluster the benchmarks ran on (--set applied) and its text; the file written also keeps --nodes and
// --gpus-per-node, so that it describes the cluster the measurements ran on.
BenchmarkCalibrationRequest benchmark_request(const CalibrateArgs& args) {
  BenchmarkCalibrationRequest request;
  request.files = args.files;
  request.output_name = args.output;
  if (!args.tokens.empty()) request.tokens = topologies::parse_token_counts(args.tokens);
  const topologies::ClusterSource source = topologies::cluster_source(args.cluster.cluster);
  const topologies::ClusterOverrides overrides = overrides_of(args.cluster);
  request.base_yaml = topologies::apply_settings(source.text, source.name, overrides.settings);
  request.spec = topologies::load_cluster_text(request.base_yaml, source.name);
  topologies::apply_overrides(request.spec, overrides);
  std::vector<topologies::Setting> sizes;
  if (args.cluster.nodes) sizes.push_back({"nodes.0.count", std::to_string(*args.cluster.nodes)});
  if (args.cluster.gpus_per_node) sizes.push_back({"gpus_per_node", std::to_string(*args.cluster.gpus_per_node)});
  request.base_yaml = topologies::apply_settings(request.base_yaml, source.name, sizes);
  return request;
}

// The fitted parameters, one row each: the network's, its send/recv bands, the attention kernel's.
Table fitted_table(const BenchmarkCalibration& result) {
  Table table({"parameter", "fitted"});
  for (const auto& [name, value] : result.network.fit.fitted) {
    table.add_row({name, name.find("bandwidth") != std::string::npos ? topologies::format_bandwidth(value)
                                                                     : topologies::format_duration(value)});
  }
  if (result.network.p2p) {
    add_band_rows(table, "p2p scale-up", result.network.p2p->scale_up);
    add_band_rows(table, "p2p scale-out", result.network.p2p->scale_out);
  }
  if (result.compute) {
    table.add_row({"HBM efficiency", std::to_string(result.compute->hbm_efficiency)});
    table.add_row({"launch overhead", topologies::format_duration(result.compute->launch_overhead_s)});
  }
  return table;
}

void print_benchmark_calibration(std::ostream& out, const BenchmarkCalibration& result,
                                 const topologies::ClusterSpec& spec) {
  const validate::CalibrationFit& fit = result.network.fit;
  if (result.network.p2p) {
    const validate::P2pFit& p2p = *result.network.p2p;
    out << "point-to-point: " << result.sends << " measurements, " << p2p.scale_up.size() + p2p.scale_out.size()
        << " size bands, median |error| " << percent(model::median_abs(p2p.rel_errors)) << " after the fit\n";
  }
  if (result.compute) {
    out << "attention kernels: " << result.kernels.size() << " measurements, median |error| "
        << percent(result.compute->median_abs_rel_error)
        << " after the fit of one HBM efficiency and launch overhead\n";
  }
  if (result.fitted_anything()) fitted_table(result).print(out);
  if (result.collectives > 0) {
    const topologies::Calibration& c = fit.calibration;
    out << "\n"
        << result.collectives << " collective measurements, " << fit.iterations << " iterations; median |error| "
        << percent(model::median_abs(fit.rel_errors_before)) << " before, "
        << percent(*c.provenance.median_abs_rel_error) << " after (max " << percent(*c.provenance.max_abs_rel_error)
        << "), R^2 of log times " << *c.provenance.r_squared << '\n';
    for (const validate::KeptPrior& kept : fit.kept_priors) out << validate::describe(kept) << '\n';
  }
  if (!result.attention_fits.empty()) {
    out << '\n';
    print_attention_fit(out, result.attention_fits,
                        spec.gpu_models.at(spec.groups.front().gpu_model).hbm_bandwidth_Bps);
  }
  if (result.step_fit) {
    if (result.fitted_anything()) out << '\n';
    print_step_fit(out, *result.step_fit, result.steps.size());
  }
}

// What was fitted: the parameters, the errors, the fits by shape and step part (table, then "wrote FILE"), or
// benchmark_calibration_json (json).
class BenchmarkReport : public Report {
 public:
  BenchmarkReport(const BenchmarkCalibration& result, const BenchmarkCalibrationRequest& request)
      : result_(result), request_(request) {}
  void print_table(std::ostream& out) const override {
    print_benchmark_calibration(out, result_, request_.spec);
    out << "wrote " << request_.output_name << '\n';
  }
  nlohmann::ordered_json json() const override { return benchmark_calibration_json(result_, request_); }

 private:
  const BenchmarkCalibration& result_;
  const BenchmarkCalibrationRequest& request_;
};

// Collective measurements fit the network (send/recv ones its point-to-point bands); attention benchmarks fit the
// compute model; decode steps the step's parts.
void run_benchmarks(const CalibrateArgs& args) {
  if (args.cluster.cluster.empty())
    throw topologies::InputError("calibrating from benchmarks needs --cluster (the cluster they ran on)");
  if (!args.impl.empty() || !args.fit.empty()) {
    throw topologies::InputError(
        "--impl and --fit are for timed decodes (a timings CSV, treering-realrun decode JSON)");
  }
  // Opened first, so that a bad path fails before the fit; the file is replaced only once everything succeeded
  // (the output may be the cluster file read below).
  topologies::OutputFile out(args.output);
  const BenchmarkCalibrationRequest request = benchmark_request(args);
  const BenchmarkCalibration result = calibrate_benchmarks(request);
  for (const std::string& note : result.notes) std::cerr << "note: " << note << '\n';
  out.stream() << result.cluster_yaml;
  out.commit();
  make_reporter(args.format, std::cout)->report(BenchmarkReport(result, request));
}

// Serving engines' benchmarks fit a profile's engine work a step, on the cluster they ran on.
void run_engine_runs(const CalibrateArgs& args) {
  if (args.cluster.cluster.empty())
    throw topologies::InputError("calibrating from an engine's benchmarks needs --cluster (the cluster they ran on)");
  if (!args.fit.empty()) throw topologies::InputError("--fit is for timed decodes; engine runs fit the engine's work");
  topologies::OutputFile out(args.output);
  const BenchmarkCalibrationRequest request = benchmark_request(args);
  const topologies::ImplProfile prior = topologies::load_impl_profile(args.impl.empty() ? "efficient" : args.impl);
  const EngineCalibration result = calibrate_engine(request.spec, prior, args.files, args.output);
  out.stream() << result.profile_yaml;
  out.commit();
  make_reporter(args.format, std::cout)
      ->report(FunctionReport({.table =
                                   [&](std::ostream& o) {
                                     print_engine_calibration(o, result);
                                     o << "wrote " << args.output << '\n';
                                   },
                               .csv = {},
                               .json = [&] { return engine_calibration_json(result); }}));
}

// Timed decodes fit a profile's overheads; benchmarks fit the cluster; engine runs the engine's work. One kind per
// run.
void run(const CalibrateArgs& args) {
  if (engine_benchmark_files(args.files)) return run_engine_runs(args);
  if (calibration_kind(args.files) == CalibrationKind::benchmarks) return run_benchmarks(args);
  if (args.cluster.nodes || args.cluster.gpus_per_node || !args.cluster.settings.empty()) {
    throw topologies::InputError("timings name their GPUs: --nodes, --gpus-per-node and --set are for benchmarks");
  }
  OverheadCalibrationRequest request{args.files, {}, args.impl, args.fit, args.output};
  if (!args.cluster.cluster.empty()) request.cluster = args.cluster.cluster;
  run_overhead_calibration(request, *make_reporter(args.format, std::cout));
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "calibrate",
      "Fit a cluster's model to measured collectives and attention kernels (writes the calibrated cluster file), "
      "or an implementation profile's overheads to timed decodes (writes the fitted profile)");
  auto args = std::make_shared<CalibrateArgs>();
  command
      ->add_option(
          "measurements", args->files,
          "Benchmarks: nccl-tests output (.log), bytes,time CSVs, treering-realrun bench JSON (collectives, "
          "attention), treering-realrun step JSON. Serving engines: vLLM bench latency/serve JSON, SGLang "
          "bench_one_batch lines (fit the --impl profile's engine work a step). "
          "Timed decodes: a CSV with the header cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s, "
          "treering-realrun decode JSON")
      ->required()
      ->check(CLI::ExistingFile);
  add_cluster_option(*command, args->cluster, false);
  command->add_option("--tokens", args->tokens,
                      "Attention benchmarks: fit only the points at these token counts, e.g. 1k,16k,128k "
                      "(validate the others with treering validate)");
  command->add_option(
      "--impl", args->impl,
      "Timed decodes and engine runs: the profile whose overheads are fitted (default: treering-realrun-cpu "
      "for realrun cpu decodes, else efficient)");
  command
      ->add_option("--fit", args->fit,
                   "Timed decodes: the overheads to fit: kernel_launch, collective_call, host_round_trip, first_call "
                   "(default: every one the timings depend on)")
      ->delimiter(',');
  add_format_option(*command, args->format);
  command
      ->add_option("-o,--output", args->output,
                   "The file to write: the calibrated cluster (benchmarks) or the fitted profile (timed decodes), YAML")
      ->required();
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
