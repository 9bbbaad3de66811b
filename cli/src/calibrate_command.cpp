// treering calibrate: fits a cluster's model to measured collectives and writes the cluster file with the fit
// in its `calibration:` section (validate/calibrate.hpp).
#include <algorithm>
#include <iostream>
#include <sstream>

#include "attention_reports.hpp"
#include "calibrate_overheads.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "treering/analysis/network_calibration.hpp"
#include "step_reports.hpp"
#include "table.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/validate/decodes.hpp"
#include "treering/validate/p2p_fit.hpp"
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
  std::string format = "table";
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

// The attention by kernel shape, where the GPU's multiprocessors are known (the kernel's chunks depend on them).
std::vector<validate::AttentionShapeFit> fit_attention_by_shape(
    const topologies::ClusterSpec& spec, const std::vector<validate::AttentionMeasurement>& kernels,
    topologies::Calibration& calibration) {
  const topologies::GpuModel& gpu = spec.gpu_models.at(spec.groups.front().gpu_model);
  if (gpu.multiprocessors < 1) {
    std::cerr << "note: attention not fitted by shape: gpu model '" << gpu.name
              << "' has no 'multiprocessors' (set it, e.g. --set "
              << "gpu_models." << gpu.name << ".multiprocessors=132)\n";
    return {};
  }
  std::vector<validate::AttentionShapeFit> fits = validate::fit_attention_shapes(spec, kernels);
  double worst = 0;
  for (const validate::AttentionShapeFit& f : fits) {
    calibration.attention_shapes.push_back(f.line);
    worst = std::max(worst, f.max_abs_rel_error);
  }
  calibration.provenance.attention_max_abs_rel_error = worst;  // the compute band of predictions on this calibration
  return fits;
}

// Collective measurements fit the network (send/recv ones its point-to-point bands); attention benchmarks fit the
// compute model.
void run_benchmarks(const CalibrateArgs& args) {
  if (args.cluster.cluster.empty())
    throw topologies::InputError("calibrating from benchmarks needs --cluster (the cluster they ran on)");
  if (!args.impl.empty() || !args.fit.empty() || args.format != "table") {
    throw topologies::InputError(
        "--impl, --fit and --format are for timed decodes (a timings CSV, treering-realrun decode JSON)");
  }
  std::vector<validate::CollectiveMeasurement> measured, sends;  // collectives; point-to-point
  std::vector<validate::AttentionMeasurement> kernels;
  const std::vector<validate::StepPoint> steps = read_calibration_steps(args.files);
  std::vector<std::string> attention_files;
  for (const std::string& file : args.files) {
    if (validate::is_step_file(file)) continue;
    if (validate::is_attention_file(file)) {
      attention_files.push_back(file);
      continue;
    }
    for (const validate::CollectiveMeasurement& row : validate::read_collective_measurements(file)) {
      (row.op == model::CollectiveOp::sendrecv ? sends : measured).push_back(row);
    }
  }
  if (!args.tokens.empty() && attention_files.empty())
    throw topologies::InputError("--tokens selects attention benchmarks, and none was given");
  if (!attention_files.empty())
    kernels = read_attention_files(
        attention_files, args.tokens.empty() ? std::vector<long long>{} : topologies::parse_token_counts(args.tokens));
  // Opened first, so that a bad path fails before the fit; the file is replaced only once everything succeeded
  // (the output may be the cluster file read below).
  topologies::OutputFile out(args.output);
  // The base with --set applied; the file written also keeps --nodes and --gpus-per-node, so that it describes
  // the cluster the measurements ran on.
  const topologies::ClusterSource source = topologies::cluster_source(args.cluster.cluster);
  const topologies::ClusterOverrides overrides = overrides_of(args.cluster);
  std::string base = topologies::apply_settings(source.text, source.name, overrides.settings);
  topologies::ClusterSpec spec = topologies::load_cluster_text(base, source.name);
  topologies::apply_overrides(spec, overrides);
  std::vector<topologies::Setting> sizes;
  if (args.cluster.nodes) sizes.push_back({"nodes.0.count", std::to_string(*args.cluster.nodes)});
  if (args.cluster.gpus_per_node) sizes.push_back({"gpus_per_node", std::to_string(*args.cluster.gpus_per_node)});
  base = topologies::apply_settings(base, source.name, sizes);
  const NetworkCalibration network = calibrate_network(spec, measured, sends, args.files);
  validate::CalibrationFit fit = network.fit;
  Table table({"parameter", "fitted"});
  for (const auto& [name, value] : fit.fitted) {
    table.add_row({name, name.find("bandwidth") != std::string::npos ? topologies::format_bandwidth(value)
                                                                     : topologies::format_duration(value)});
  }
  if (network.p2p) {
    const validate::P2pFit& p2p = *network.p2p;
    add_band_rows(table, "p2p scale-up", p2p.scale_up);
    add_band_rows(table, "p2p scale-out", p2p.scale_out);
    std::cout << "point-to-point: " << sends.size() << " measurements, " << p2p.scale_up.size() + p2p.scale_out.size()
              << " size bands, median |error| " << percent(model::median_abs(p2p.rel_errors)) << " after the fit\n";
  }
  std::vector<validate::AttentionShapeFit> attention_fits;
  if (!kernels.empty()) {
    const validate::ComputeFit compute = validate::fit_compute(spec, kernels);
    const auto [fewest, most] = std::minmax_element(kernels.begin(), kernels.end(),
                                                    [](const auto& a, const auto& b) { return a.tokens < b.tokens; });
    fit.calibration.provenance.tokens = std::pair{fewest->tokens, most->tokens};
    fit.calibration.hbm_efficiency = compute.hbm_efficiency;
    fit.calibration.launch_overhead_s = compute.launch_overhead_s;
    table.add_row({"HBM efficiency", std::to_string(compute.hbm_efficiency)});
    table.add_row({"launch overhead", topologies::format_duration(compute.launch_overhead_s)});
    std::cout << "attention kernels: " << kernels.size() << " measurements, median |error| "
              << percent(compute.median_abs_rel_error) << " after the fit of one HBM efficiency and launch overhead\n";
    attention_fits = fit_attention_by_shape(spec, kernels, fit.calibration);
  }
  std::optional<validate::StepFit> step_fit;
  if (!steps.empty()) {
    step_fit = validate::fit_step(spec, steps);
    fit.calibration.step = step_fit->parts;
    fit.calibration.step_attention_shapes = step_fit->attention_shapes;
  }
  const std::string text = validate::with_calibration(base, fit.calibration);
  topologies::load_cluster_text(text, args.output);  // what is written must load
  out.stream() << text;
  out.commit();
  if (!fit.fitted.empty() || !sends.empty() || !kernels.empty()) table.print(std::cout);
  if (!measured.empty()) {
    const topologies::Calibration& c = fit.calibration;
    std::cout << "\n"
              << measured.size() << " collective measurements, " << fit.iterations << " iterations; median |error| "
              << percent(model::median_abs(fit.rel_errors_before)) << " before, "
              << percent(*c.provenance.median_abs_rel_error) << " after (max "
              << percent(*c.provenance.max_abs_rel_error) << "), R^2 of log times " << *c.provenance.r_squared << '\n';
    for (const validate::KeptPrior& kept : fit.kept_priors) std::cout << validate::describe(kept) << '\n';
  }
  if (!attention_fits.empty()) {
    std::cout << '\n';
    print_attention_fit(std::cout, attention_fits, spec.gpu_models.at(spec.groups.front().gpu_model).hbm_bandwidth_Bps);
  }
  if (step_fit) {
    if (!fit.fitted.empty() || !sends.empty() || !kernels.empty()) std::cout << '\n';
    print_step_fit(std::cout, *step_fit, steps.size());
  }
  std::cout << "wrote " << args.output << '\n';
}

// Timed decodes fit a profile's overheads; benchmarks fit the cluster. One kind per run.
void run(const CalibrateArgs& args) {
  const auto timings = std::count_if(args.files.begin(), args.files.end(), is_timings_file);
  if (timings == 0) return run_benchmarks(args);
  if (timings != static_cast<long>(args.files.size())) {
    throw topologies::InputError(
        "calibrate timed decodes (they fit a profile) and benchmarks (they fit a cluster) in separate runs");
  }
  if (args.cluster.nodes || args.cluster.gpus_per_node || !args.cluster.settings.empty()) {
    throw topologies::InputError("timings name their GPUs: --nodes, --gpus-per-node and --set are for benchmarks");
  }
  OverheadCalibrationArgs overheads{args.files, {}, args.impl, args.fit, args.output, args.format};
  if (!args.cluster.cluster.empty()) overheads.cluster = args.cluster.cluster;
  run_overhead_calibration(overheads);
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
          "attention), treering-realrun step JSON. "
          "Timed decodes: a CSV with the header cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s, "
          "treering-realrun decode JSON")
      ->required()
      ->check(CLI::ExistingFile);
  add_cluster_option(*command, args->cluster, false);
  command->add_option("--tokens", args->tokens,
                      "Attention benchmarks: fit only the points at these token counts, e.g. 1k,16k,128k "
                      "(validate the others with treering validate)");
  command->add_option("--impl", args->impl,
                      "Timed decodes: the profile whose overheads are fitted (default: treering-realrun-cpu for "
                      "realrun cpu decodes, else efficient)");
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
