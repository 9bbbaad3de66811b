// treering validate: measured collectives (nccl-tests logs, CSVs) beside the model's and the simulator's
// predictions on a cluster, case by case, with the median, p90 and max error per engine and operation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "attention_reports.hpp"
#include "step_reports.hpp"
#include "table.hpp"
#include "treering/analysis/validate_report.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/decodes.hpp"
#include "treering/validate/report.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;

struct ValidateArgs {
  ClusterArgs cluster;
  std::vector<std::string> files;
  std::vector<std::string> engines{"model"};
  double max_error = 0;   // 0: no bound
  double max_factor = 0;  // 0: no bound
  std::string format = "table";
};

std::string percent(double value, bool sign = true) { return format_percent(value, sign); }

void print_table(const std::vector<validate::CaseResult>& cases, const std::vector<validate::ErrorSummary>& summary,
                 const std::vector<validate::Engine>& engines) {
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
    table.print(std::cout);
    std::cout << '\n';
  }
  Table totals({"engine", "op", "cases", "median |error|", "p90 |error|", "max |error|", "median noise"});
  for (const validate::ErrorSummary& s : summary) {
    totals.add_row({validate::to_string(s.engine), s.operation, std::to_string(s.cases),
                    percent(s.median_abs_rel_error, false), percent(s.p90_abs_rel_error, false),
                    percent(s.max_abs_rel_error, false), s.median_noise ? percent(*s.median_noise, false) : "-"});
  }
  totals.print(std::cout);
}

void print_decode_table(const std::vector<validate::DecodeCase>& cases, const std::vector<validate::Engine>& engines,
                        bool calibrated) {
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
  table.print(std::cout);
  for (const auto& [which, why] : outside) std::cout << "* " << which << ": " << why << '\n';
  std::cout << '\n';
}

// Fails (exit 1) on a prediction or measurement that is not a finite positive time, and with --max-factor when
// the median case of an engine and algorithm (or operation) is predicted more than that many times too slow or
// too fast: the loop's check that the machinery works, on any machine, idle or busy (one case may be hit by a
// neighbour's burst; the median of several is not). Median by nearest rank, the lower middle.
void check_gross_errors(const std::vector<validate::DecodeCase>& cases,
                        const std::vector<validate::CaseResult>& collectives,
                        const std::vector<validate::Engine>& engines, double max_factor) {
  std::map<std::string, std::vector<double>> ratios;  // "model, ring" -> predicted / measured per case
  auto add = [&](const std::string& group, const std::string& what, double measured_s, double predicted_s) {
    const double ratio = predicted_s / measured_s;
    if (!std::isfinite(ratio) || !(ratio > 0)) {
      std::cerr << "error: " << what << ": the prediction (" << predicted_s << " s) or the measurement (" << measured_s
                << " s) is not a finite positive time\n";
      throw ExitWith{1};
    }
    ratios[group].push_back(ratio);
  };
  for (validate::Engine engine : engines) {
    const std::string name = validate::to_string(engine);
    for (const auto& c : cases) {
      add(name + ", " + c.measured.algorithm,
          name + ", " + c.measured.algorithm + " at " + std::to_string(c.measured.seq_len) + " tokens",
          c.measured.latency_s, c.predicted_s.at(engine));
    }
    for (const auto& c : collectives) {
      const std::string op = model::to_string(c.measured.op);
      add(name + ", " + op, name + ", " + op + " of " + topologies::format_bytes(c.measured.bytes), c.measured.time_s,
          c.predicted_s.at(engine));
    }
  }
  for (auto& [group, values] : ratios) {
    const double median = model::median(values);
    if (max_factor > 0 && (median > max_factor || median < 1 / max_factor)) {
      std::cerr << "error: " << group << ": the median case is predicted " << median
                << "x the measured time, off by more than --max-factor " << max_factor << '\n';
      throw ExitWith{1};
    }
  }
}

// Exit 1 when the median |error| over `what` exceeds --max-error.
void check_max_error(const ValidateArgs& args, double median, const std::string& what) {
  if (args.max_error > 0 && median > args.max_error) {
    std::cerr << "error: the model's median error on " << what << " is " << percent(median, false)
              << ", over --max-error " << percent(args.max_error, false) << '\n';
    throw ExitWith{1};
  }
}

void run(const ValidateArgs& args) {
  const auto steps = std::count_if(args.files.begin(), args.files.end(), validate::is_step_file);
  if (steps > 0) {  // real decode steps: the model by part (the simulator replays no step)
    if (steps != static_cast<long>(args.files.size()))
      throw topologies::InputError("validate decode steps apart from other measurements");
    check_max_error(args, print_step_validation(std::cout, load_topology(args.cluster).spec(), args.files, args.format),
                    "decode steps");
    return;
  }
  const auto kernels = std::count_if(args.files.begin(), args.files.end(), validate::is_attention_file);
  if (kernels > 0) {  // attention benchmarks: the compute model, kernel by kernel
    if (kernels != static_cast<long>(args.files.size()))
      throw topologies::InputError("validate attention benchmarks apart from other measurements");
    check_max_error(args,
                    print_attention_validation(std::cout, load_topology(args.cluster).spec(), args.files, args.format),
                    "attention kernels");
    return;
  }
  std::vector<validate::Engine> engines;
  for (const std::string& name : args.engines) engines.push_back(validate::parse_engine(name));
  const topologies::Topology topology = load_topology(args.cluster);
  const ValidateReport report = validate_measurements(topology, args.files, engines);
  for (const std::string& warning : report.warnings) std::cerr << "warning: " << warning << '\n';
  const auto& cases = report.cases;
  const auto& decode_cases = report.decodes;
  const auto& summary = report.summary;
  if (args.format == "json") {
    std::cout << validate_json(topology, report).dump(2) << '\n';
  } else {
    if (!decode_cases.empty()) print_decode_table(decode_cases, engines, topology.spec().calibration.has_value());
    print_table(cases, summary, engines);
  }
  check_gross_errors(decode_cases, cases, engines, args.max_factor);
  for (const validate::ErrorSummary& s : summary) {
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
                   "nccl-tests output (.log), bytes,time CSV files, or treering-realrun bench/decode/step JSON")
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
  add_format_option(*command, args->format);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
