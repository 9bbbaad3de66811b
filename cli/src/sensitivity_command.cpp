// treering sensitivity: which cluster parameters move the decode latency most, per algorithm. Each parameter
// of the cluster file is scaled by 1 +- 5 % (every node group's or GPU model's own value) and the model
// re-run: the elasticity is d ln(latency) / d ln(parameter), by central difference:
//   e = ln(L(1.05 p) / L(0.95 p)) / ln(1.05 / 0.95).
// Example: a latency bound by NIC bandwidth alone (L = S / B) gives e = -1; one that does not depend on it, 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

constexpr double kStep = 0.05;

// Parameters looked for in the cluster file (shorthand paths: every node group's, GPU model's, the network's).
const std::vector<std::string> kParameters{
    "nics.bandwidth",  "nics.latency",        "fabric.bandwidth",   "fabric.latency",     "hbm_bandwidth",
    "launch_overhead", "network.hop_latency", "network.link_bandwidth", "peak_fp16"};

struct SensitivityArgs : DecodeArgs {
  SensitivityArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  std::vector<std::string> parameters;  // default: those of kParameters the file has, non-zero
};

struct Row {
  std::string parameter;
  std::string value;                 // as written (the first group's)
  std::vector<double> elasticities;  // per algorithm
};

// The latency of each algorithm on the cluster described by `text`.
std::vector<double> latencies(const std::string& text, const std::string& source, const SensitivityArgs& args,
                              const std::vector<model::DecodeAlgorithm>& algorithms, const model::Workload& workload, long long seq_len) {
  topologies::ClusterSpec spec = topologies::load_cluster_text(text, source);
  topologies::apply_overrides(spec, {args.cluster.nodes, args.cluster.gpus_per_node, {}});
  const topologies::Topology topology(std::move(spec));
  const model::DecodeModel decode(topology, args.gpus);
  const model::PlanOptions options = plan_options(args);
  std::vector<double> out;
  for (model::DecodeAlgorithm algorithm : algorithms) out.push_back(decode.predict(algorithm, workload, seq_len, options).latency_s);
  return out;
}

bool usable(const std::string& text, const std::string& source, const std::string& path) {
  const std::vector<std::string> values = topologies::setting_values(text, source, path);
  return !values.empty() && std::all_of(values.begin(), values.end(), [](const std::string& v) {
    char* end = nullptr;
    const double number = std::strtod(v.c_str(), &end);
    return end != v.c_str() && number > 0;
  });
}

std::string signed_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.3f", std::abs(value) < 5e-4 ? 0.0 : value);
  return text;
}

void run(const SensitivityArgs& args) {
  const topologies::ClusterSource source = topologies::cluster_source(args.cluster.cluster);
  const std::string base = topologies::apply_settings(source.text, source.name, overrides_of(args.cluster).settings);
  const model::Workload workload = load_workload(args);
  const std::vector<long long> lengths = topologies::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw std::invalid_argument("--seq-len takes one length here");
  std::vector<model::DecodeAlgorithm> algorithms;
  for (const std::string& name : args.algorithms) algorithms.push_back(model::parse_decode_algorithm(name));
  std::vector<std::string> parameters = args.parameters;
  if (parameters.empty()) {
    for (const std::string& path : kParameters) if (usable(base, source.name, path)) parameters.push_back(path);
  }
  const std::vector<double> at_base = latencies(base, source.name, args, algorithms, workload, lengths[0]);
  std::vector<Row> rows;
  for (const std::string& path : parameters) {
    const auto up = latencies(topologies::scale_setting(base, source.name, path, 1 + kStep), source.name, args, algorithms, workload, lengths[0]);
    const auto down = latencies(topologies::scale_setting(base, source.name, path, 1 - kStep), source.name, args, algorithms, workload, lengths[0]);
    Row row{path, topologies::setting_values(base, source.name, path).front(), {}};
    for (size_t a = 0; a < algorithms.size(); ++a) row.elasticities.push_back(std::log(up[a] / down[a]) / std::log((1 + kStep) / (1 - kStep)));
    rows.push_back(row);
  }
  auto largest = [](const Row& row) {
    double m = 0;
    for (double e : row.elasticities) m = std::max(m, std::abs(e));
    return m;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return largest(a) > largest(b); });
  if (args.format == "json") {
    nlohmann::ordered_json json = {{"cluster", source.name}, {"workload", workload.name}, {"seq_len", lengths[0]}, {"step", kStep}};
    for (size_t a = 0; a < algorithms.size(); ++a) json["latency_s"][model::to_string(algorithms[a])] = at_base[a];
    json["parameters"] = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      nlohmann::ordered_json e;
      for (size_t a = 0; a < algorithms.size(); ++a) e[model::to_string(algorithms[a])] = row.elasticities[a];
      json["parameters"].push_back({{"path", row.parameter}, {"value", row.value}, {"elasticity", e}});
    }
    std::cout << json.dump(2) << '\n';
    return;
  }
  std::cout << "elasticity of latency: d ln(latency) / d ln(parameter), the parameter scaled by 1 +- " << kStep * 100
            << " % (-1: latency halves when the parameter doubles; 0: no effect)\n\n";
  std::vector<std::string> header{"parameter", "value"};
  for (model::DecodeAlgorithm algorithm : algorithms) header.push_back(model::to_string(algorithm));
  Table table(header);
  std::vector<std::string> latency_row{"latency", ""};
  for (double seconds : at_base) latency_row.push_back(topologies::format_duration(seconds));
  table.add_row(latency_row);
  for (const Row& row : rows) {
    std::vector<std::string> cells{row.parameter, row.value};
    for (double e : row.elasticities) cells.push_back(signed_number(e));
    table.add_row(cells);
  }
  table.print(std::cout);
}

}  // namespace

void add_sensitivity_command(CLI::App& app) {
  auto* command = app.add_subcommand("sensitivity", "Which cluster parameters move the decode latency most (elasticities), per algorithm");
  auto args = std::make_shared<SensitivityArgs>();
  add_decode_options(*command, *args, "Algorithms: ring, tree, tree-fused, tree-lse, allgather-merge", {"table", "json"});
  drop_options(*command, {"--tokens", "--prefill"});  // the elasticities are of the per-token latency
  command->add_option("--param", args->parameters, "Paths to vary (default: NIC, fabric, HBM, launch, network figures the file has)")
      ->delimiter(',');
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
