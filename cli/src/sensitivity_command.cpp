// treering sensitivity: which cluster parameters move the decode latency most, per algorithm (sensitivity.hpp:
// each parameter scaled by 1 +- 5 %, the elasticity d ln(latency) / d ln(parameter) by central difference).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/analysis/sensitivity.hpp"
#include "table.hpp"
#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

constexpr double kStep = 0.05;

struct SensitivityArgs : DecodeArgs {
  SensitivityArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  std::vector<std::string> parameters;  // default: default_sensitivity_parameters() the file has, non-zero
};

std::string signed_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.3f", std::abs(value) < 5e-4 ? 0.0 : value);
  return text;
}

// The elasticities, parameters ordered by their largest: a table with the latencies on top (table), or the
// latencies and each parameter's elasticity per algorithm (json).
class SensitivityReport : public Report {
 public:
  SensitivityReport(const SensitivityRequest& request, const SensitivityResult& result,
                    const std::vector<SensitivityRow>& rows)
      : request_(request), result_(result), rows_(rows) {}
  void print_table(std::ostream& out) const override {
    out << "elasticity of latency: d ln(latency) / d ln(parameter), the parameter scaled by 1 +- " << kStep * 100
        << " % (-1: latency halves when the parameter doubles; 0: no effect)\n\n";
    std::vector<std::string> header{"parameter", "value"};
    for (model::DecodeAlgorithm algorithm : request_.algorithms) header.push_back(model::to_string(algorithm));
    Table table(header);
    std::vector<std::string> latency_row{"latency", ""};
    for (double seconds : result_.latency_s) latency_row.push_back(topologies::format_duration(seconds));
    table.add_row(latency_row);
    for (const SensitivityRow& row : rows_) {
      std::vector<std::string> cells{row.parameter, row.value};
      for (double e : row.elasticities) cells.push_back(signed_number(e));
      table.add_row(cells);
    }
    table.print(out);
  }
  nlohmann::ordered_json json() const override {
    const std::vector<model::DecodeAlgorithm>& algorithms = request_.algorithms;
    nlohmann::ordered_json json = {{"cluster", request_.source_name},
                                   {"workload", request_.workload.name},
                                   {"seq_len", request_.seq_len},
                                   {"step", kStep}};
    for (size_t a = 0; a < algorithms.size(); ++a)
      json["latency_s"][model::to_string(algorithms[a])] = result_.latency_s[a];
    json["parameters"] = nlohmann::ordered_json::array();
    for (const SensitivityRow& row : rows_) {
      nlohmann::ordered_json e;
      for (size_t a = 0; a < algorithms.size(); ++a) e[model::to_string(algorithms[a])] = row.elasticities[a];
      json["parameters"].push_back({{"path", row.parameter}, {"value", row.value}, {"elasticity", e}});
    }
    return json;
  }

 private:
  const SensitivityRequest& request_;
  const SensitivityResult& result_;
  const std::vector<SensitivityRow>& rows_;
};

void run(const SensitivityArgs& args) {
  const topologies::ClusterSource source = topologies::cluster_source(args.cluster.cluster);
  SensitivityRequest request;
  request.cluster_text = topologies::apply_settings(source.text, source.name, overrides_of(args.cluster).settings);
  request.source_name = source.name;
  request.nodes = args.cluster.nodes;
  request.gpus_per_node = args.cluster.gpus_per_node;
  request.gpus = args.gpus;
  request.workload = load_workload(args);
  const std::vector<long long> lengths = topologies::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw topologies::InputError("--seq-len takes one length here");
  request.seq_len = lengths[0];
  for (const std::string& name : args.algorithms) request.algorithms.push_back(model::parse_decode_algorithm(name));
  request.options = plan_options(args);
  request.parameters = args.parameters;
  request.step = kStep;
  const SensitivityResult result = sensitivity(request);
  std::vector<SensitivityRow> rows = result.rows;
  auto largest = [](const SensitivityRow& row) {
    double m = 0;
    for (double e : row.elasticities) m = std::max(m, std::abs(e));
    return m;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const SensitivityRow& a, const SensitivityRow& b) { return largest(a) > largest(b); });
  make_reporter(args.format, std::cout)->report(SensitivityReport(request, result, rows));
}

}  // namespace

void add_sensitivity_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "sensitivity", "Which cluster parameters move the decode latency most (elasticities), per algorithm");
  auto args = std::make_shared<SensitivityArgs>();
  add_decode_options(*command, *args, "Algorithms: " + model::decode_algorithm_names(true),
                     {OutputFormat::table, OutputFormat::json});
  drop_options(*command, {"--tokens", "--prefill"});  // the elasticities are of the per-token latency
  command->get_option("--seq-len")
      ->description(std::string("One context length: 80k, 5.12M; ") + topologies::kTokenCountRule);
  command
      ->add_option("--param", args->parameters,
                   "Paths to vary (default: NIC, fabric, HBM, launch, network figures the file has)")
      ->delimiter(',');
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
