// treering validate: measured collectives (nccl-tests logs, CSVs) beside the model's and the simulator's
// predictions on a cluster, case by case, with the median, p90 and max error per engine and operation.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/calibrate.hpp"
#include "treering/validate/report.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
namespace fmt = treering::topologies;

struct ValidateArgs {
  ClusterArgs cluster;
  std::vector<std::string> files;
  std::vector<std::string> engines{"model"};
  double max_error = 0;  // 0: no bound
  std::string format = "table";
};

std::string percent(double value, bool sign = true) {
  char text[32];
  std::snprintf(text, sizeof text, sign ? "%+.1f %%" : "%.1f %%", 100 * value);
  return text;
}

void print_table(const std::vector<validate::CaseResult>& cases, const std::vector<validate::ErrorSummary>& summary,
                 const std::vector<validate::Engine>& engines) {
  std::vector<std::string> header{"op", "ranks", "size", "measured"};
  for (validate::Engine engine : engines) {
    header.push_back(validate::to_string(engine));
    header.push_back("error");
  }
  header.push_back("model's pick");
  Table table(header);
  for (const validate::CaseResult& c : cases) {
    std::vector<std::string> row{model::to_string(c.measured.op), std::to_string(c.measured.ranks),
                                 fmt::format_bytes(c.measured.bytes), fmt::format_duration(c.measured.time_s)};
    for (validate::Engine engine : engines) {
      row.push_back(fmt::format_duration(c.predicted_s.at(engine)));
      row.push_back(percent(c.error(engine)));
    }
    row.push_back(c.how);
    table.add_row(row);
  }
  table.print(std::cout);
  std::cout << '\n';
  Table totals({"engine", "op", "cases", "median |error|", "p90 |error|", "max |error|"});
  for (const validate::ErrorSummary& s : summary) {
    totals.add_row({validate::to_string(s.engine), s.operation, std::to_string(s.cases), percent(s.median_abs_rel_error, false),
                    percent(s.p90_abs_rel_error, false), percent(s.max_abs_rel_error, false)});
  }
  totals.print(std::cout);
}

ordered_json to_json(const std::vector<validate::CaseResult>& cases, const std::vector<validate::ErrorSummary>& summary) {
  ordered_json rows = ordered_json::array(), totals = ordered_json::array();
  for (const validate::CaseResult& c : cases) {
    ordered_json predicted, errors;
    for (const auto& [engine, seconds] : c.predicted_s) {
      predicted[validate::to_string(engine)] = seconds;
      errors[validate::to_string(engine)] = c.error(engine);
    }
    rows.push_back({{"op", model::to_string(c.measured.op)}, {"ranks", c.measured.ranks}, {"size_bytes", c.measured.bytes},
                    {"measured_s", c.measured.time_s}, {"predicted_s", predicted}, {"rel_error", errors},
                    {"model_pick", c.how}, {"file", c.measured.file}, {"line", c.measured.line}});
  }
  for (const validate::ErrorSummary& s : summary) {
    totals.push_back({{"engine", validate::to_string(s.engine)}, {"op", s.operation}, {"cases", s.cases},
                      {"median_abs_rel_error", s.median_abs_rel_error}, {"p90_abs_rel_error", s.p90_abs_rel_error},
                      {"max_abs_rel_error", s.max_abs_rel_error}});
  }
  return {{"cases", rows}, {"summary", totals}};
}

void run(const ValidateArgs& args) {
  std::vector<validate::Engine> engines;
  for (const std::string& name : args.engines) engines.push_back(validate::parse_engine(name));
  std::vector<validate::CollectiveMeasurement> measured;
  for (const std::string& file : args.files) {
    const auto rows = validate::read_collective_measurements(file);
    measured.insert(measured.end(), rows.begin(), rows.end());
  }
  const topologies::Topology topology = load_topology(args.cluster);
  const auto cases = validate::predict_cases(topology, measured, engines);
  if (const auto& calibration = topology.spec().calibration) {  // predictions outside what it was fitted on
    int outside = 0;
    for (const auto& c : cases) outside += validate::extrapolation(*calibration, c.measured.bytes, c.measured.ranks).empty() ? 0 : 1;
    if (outside > 0) std::cerr << "warning: " << outside << " of " << cases.size() << " cases lie outside what the calibration was fitted on\n";
  }
  const auto summary = validate::summarise(cases, engines);
  if (args.format == "json") std::cout << to_json(cases, summary).dump(2) << '\n';
  else print_table(cases, summary, engines);
  for (const validate::ErrorSummary& s : summary) {
    if (args.max_error > 0 && s.median_abs_rel_error > args.max_error) {
      std::cerr << "error: the " << validate::to_string(s.engine) << "'s median error on " << s.operation << " is "
                << percent(s.median_abs_rel_error, false) << ", over --max-error " << percent(args.max_error, false) << '\n';
      throw ExitWith{1};
    }
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* command = app.add_subcommand("validate", "Measured collectives (nccl-tests logs, CSVs) against the model and the simulator");
  auto args = std::make_shared<ValidateArgs>();
  add_cluster_option(*command, args->cluster);
  command->add_option("measurements", args->files, "nccl-tests output (.log) or bytes,time CSV files")->required()->check(CLI::ExistingFile);
  command->add_option("--engine", args->engines, "model, sim (comma-separated)")->delimiter(',')->capture_default_str();
  command->add_option("--max-error", args->max_error, "Exit 1 when an engine's median |relative error| exceeds this (0.1 = 10 %)")
      ->check(CLI::Range(0.0, 100.0));
  add_format_option(*command, args->format);
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
