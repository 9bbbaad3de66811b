// treering validate: measurements beside the model's (and the simulator's) predictions. Collectives (nccl-tests
// logs, CSVs, treering-realrun bench JSON) and timed decodes case by case, with the median, p90 and max error per
// engine and operation (analysis/validate_report.hpp); attention benchmarks kernel by kernel and decode steps part
// by part (analysis/kernel_validation.hpp).
#include <iostream>
#include <nlohmann/json.hpp>

#include "attention_reports.hpp"
#include "engine_reports.hpp"
#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "step_reports.hpp"
#include "table.hpp"
#include "treering/analysis/engine_runs_report.hpp"
#include "treering/analysis/kernel_validation.hpp"
#include "treering/analysis/validate_report.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

struct ValidateArgs {
  ClusterArgs cluster;
  std::vector<std::string> files;
  std::vector<std::string> engines{"model"};
  double max_error = 0;   // 0: no bound
  double max_factor = 0;  // 0: no bound
  std::string impl;       // serving engines' runs: the profile predicting them
  OutputFormat format = OutputFormat::table;
};

std::string percent(double value, bool sign = true) { return format_percent(value, sign); }

void print_table(std::ostream& out, const std::vector<validate::CaseResult>& cases,
                 const std::vector<validate::ErrorSummary>& summary, const std::vector<validate::Engine>& engines) {
  std::vector<std::string> header{"op", "ranks", "size", "measured"};
  for (validate::Engine engine : engines) {
    header.push_back(validate::to_string(engine));
    header.push_back("error");
  }
  header.push_back("model's pick");
  Table table(header);
  for (const validate::CaseResult& c : cases) {  // (none: only decodes were given)
    std::vector<std::string> row{model::to_string(c.measured.op), std::to_string(c.measured.ranks),
                                 topologies::format_bytes(c.measured.bytes),
                                 topologies::format_duration(c.measured.time_s)};
    for (validate::Engine engine : engines) {
      row.push_back(topologies::format_duration(c.predicted_s.at(engine)));
      row.push_back(percent(c.error(engine)));
    }
    row.push_back(c.how);
    table.add_row(row);
  }
  if (!cases.empty()) {
    table.print(out);
    out << '\n';
  }
  Table totals({"engine", "op", "cases", "median |error|", "p90 |error|", "max |error|", "median noise"});
  for (const validate::ErrorSummary& s : summary) {
    totals.add_row({validate::to_string(s.engine), s.operation, std::to_string(s.cases),
                    percent(s.median_abs_rel_error, false), percent(s.p90_abs_rel_error, false),
                    percent(s.max_abs_rel_error, false), s.median_noise ? percent(*s.median_noise, false) : "-"});
  }
  totals.print(out);
}

void print_decode_table(std::ostream& out, const std::vector<validate::DecodeCase>& cases,
                        const std::vector<validate::Engine>& engines, bool calibrated) {
  std::vector<std::string> header{"algorithm", "workload", "batch", "tokens", "ranks", "measured", "noise"};
  for (validate::Engine engine : engines) {
    header.push_back(validate::to_string(engine));
    header.push_back("error");
  }
  header.push_back("calibration");
  Table table(header);
  std::map<std::string, std::string> outside;  // "ring, 8000 tokens, 2 ranks" -> why
  for (const validate::DecodeCase& c : cases) {
    std::vector<std::string> row{c.measured.algorithm,
                                 c.measured.workload,
                                 std::to_string(c.measured.batch),
                                 std::to_string(c.measured.seq_len),
                                 std::to_string(c.measured.ranks),
                                 topologies::format_duration(c.measured.latency_s),
                                 percent(c.noise, false)};
    for (validate::Engine engine : engines) {
      row.push_back(topologies::format_duration(c.predicted_s.at(engine)));
      row.push_back(percent(c.error(engine)));
    }
    row.push_back(calibration_label(calibrated, c));
    table.add_row(row);
    if (!c.extrapolation.empty()) {
      outside[c.measured.algorithm + " at " + std::to_string(c.measured.seq_len) + " tokens on " +
              std::to_string(c.measured.ranks) + " ranks"] = c.extrapolation;
    }
  }
  table.print(out);
  for (const auto& [which, why] : outside) out << "* " << which << ": " << why << '\n';
  out << '\n';
}

class CollectiveReport : public Report {
 public:
  CollectiveReport(const topologies::Topology& topology, const ValidateReport& report,
                   const std::vector<validate::Engine>& engines)
      : topology_(topology), report_(report), engines_(engines) {}
  void print_table(std::ostream& out) const override {
    if (!report_.decodes.empty())
      print_decode_table(out, report_.decodes, engines_, topology_.spec().calibration.has_value());
    cli::print_table(out, report_.cases, report_.summary, engines_);
  }
  nlohmann::ordered_json json() const override { return validate_json(topology_, report_); }

 private:
  const topologies::Topology& topology_;
  const ValidateReport& report_;
  const std::vector<validate::Engine>& engines_;
};

// Exit 1 when the median |error| over `what` exceeds --max-error.
void check_max_error(const ValidateArgs& args, double median, const std::string& what) {
  if (args.max_error > 0 && median > args.max_error) {
    std::cerr << "error: the model's median error on " << what << " is " << percent(median, false)
              << ", over --max-error " << percent(args.max_error, false) << '\n';
    throw ExitWith{1};
  }
}

// Real decode steps: the model by part (the simulator replays no step); attention benchmarks: the compute model,
// kernel by kernel. False when `args.files` hold neither.
bool validate_kernels(const ValidateArgs& args) {
  const KernelFiles kind = kernel_files(args.files);
  if (kind == KernelFiles::none) return false;
  const topologies::ClusterSpec spec = load_topology(args.cluster).spec();
  if (kind == KernelFiles::steps) {
    const StepValidation validation = validate_steps(spec, args.files);
    for (const std::string& note : validation.notes) std::cerr << "note: " << note << '\n';
    make_reporter(args.format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_step_validation(out, validation); },
                                 .csv = {},
                                 .json = [&] { return step_validation_json(validation); }}));
    check_max_error(args, validation.median_abs_rel_error, "decode steps");
  } else {
    const AttentionValidation validation = validate_attention(spec, args.files);
    make_reporter(args.format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_attention_validation(out, validation); },
                                 .csv = {},
                                 .json = [&] { return attention_validation_json(validation); }}));
    check_max_error(args, validation.median_abs_rel_error, "attention kernels");
  }
  return true;
}

// Serving engines' benchmarks: each run predicted like for like with --impl. False when `args.files` hold none.
bool validate_engine_runs(const ValidateArgs& args) {
  if (!analysis::engine_benchmark_files(args.files)) return false;
  const topologies::ClusterSpec spec = load_topology(args.cluster).spec();
  const topologies::ImplProfile profile = topologies::load_impl_profile(args.impl.empty() ? "efficient" : args.impl);
  const EngineValidation validation = analysis::validate_engine_runs(spec, profile, args.files);
  make_reporter(args.format, std::cout)
      ->report(FunctionReport({.table = [&](std::ostream& out) { print_engine_validation(out, validation); },
                               .csv = {},
                               .json = [&] { return engine_validation_json(validation); }}));
  check_max_error(args, validation.median_abs_rel_error, "engine runs");
  return true;
}

// Fails (exit 1) on a prediction or measurement that is not a finite positive time, and with --max-factor when
// the median case of an engine and algorithm (or operation) is predicted more than that many times too slow or
// too fast (analysis::gross_error): the loop's check that the machinery works, on any machine, idle or busy.
void run(const ValidateArgs& args) {
  if (validate_engine_runs(args)) return;
  if (!args.impl.empty())
    throw topologies::InputError(
        "--impl is for serving engines' benchmarks (vLLM bench latency/serve JSON, SGLang one-batch lines)");
  if (validate_kernels(args)) return;
  std::vector<validate::Engine> engines;
  for (const std::string& name : args.engines) engines.push_back(validate::parse_engine(name));
  const topologies::Topology topology = load_topology(args.cluster);
  const ValidateReport report = validate_measurements(topology, args.files, engines);
  for (const std::string& warning : report.warnings) std::cerr << "warning: " << warning << '\n';
  make_reporter(args.format, std::cout)->report(CollectiveReport(topology, report, engines));
  if (const std::optional<std::string> error = gross_error(report, engines, args.max_factor)) {
    std::cerr << "error: " << *error << '\n';
    throw ExitWith{1};
  }
  for (const validate::ErrorSummary& s : report.summary) {
    if (args.max_error > 0 && s.median_abs_rel_error > args.max_error) {
      std::cerr << "error: the " << validate::to_string(s.engine) << "'s median error on " << s.operation << " is "
                << percent(s.median_abs_rel_error, false) << ", over --max-error " << percent(args.max_error, false)
                << '\n';
      throw ExitWith{1};
    }
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "validate", "Measurements (nccl-tests logs, CSVs, treering-realrun JSON) against the model and the simulator");
  auto args = std::make_shared<ValidateArgs>();
  add_cluster_option(*command, args->cluster);
  command
      ->add_option("measurements", args->files,
                   "nccl-tests output (.log), bytes,time CSV files, treering-realrun bench/decode/step JSON, or a "
                   "serving engine's benchmarks (vLLM bench latency/serve JSON, SGLang bench_one_batch lines)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--engine", args->engines, "model, sim (comma-separated)")->delimiter(',')->capture_default_str();
  command
      ->add_option("--max-error", args->max_error,
                   "Exit 1 when an engine's median |relative error| exceeds this (0.1 = 10 %)")
      ->check(CLI::Range(0.0, 100.0));
  command
      ->add_option("--max-factor", args->max_factor,
                   "Exit 1 when the median case of an algorithm is predicted more than this many times too slow or too "
                   "fast (3: a gross error)")
      ->check(CLI::Range(1.0, 1e6));
  command->add_option("--impl", args->impl,
                      "Serving engines' benchmarks: the profile predicting them (default: efficient; a fitted one from "
                      "treering calibrate)");
  add_format_option(*command, args->format);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
