// treering topo list | check | show | dot
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/summary.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

namespace topo = treering::topologies;
using nlohmann::ordered_json;

ordered_json route_json(const std::optional<topo::RouteSummary>& route) {
  if (!route) return nullptr;
  return {{"from", route->from},
          {"to", route->to},
          {"hops", route->hops},
          {"latency_s", route->latency_s},
          {"bottleneck_Bps", route->bottleneck_Bps}};
}

ordered_json summary_json(const topo::ClusterSummary& summary) {
  ordered_json groups = ordered_json::array();
  for (const topo::GroupSummary& group : summary.groups) {
    groups.push_back({{"name", group.name},
                      {"count", group.count},
                      {"gpu_model", group.gpu_model},
                      {"architecture", group.architecture},
                      {"host_cpu", group.host_cpu},
                      {"gpus_per_node", group.gpus_per_node},
                      {"fabric", group.fabric},
                      {"nics", group.nics},
                      {"scale_up_per_gpu_Bps", group.scale_up_per_gpu_Bps},
                      {"scale_out_per_gpu_Bps", group.scale_out_per_gpu_Bps}});
  }
  return {{"name", summary.name},
          {"description", summary.description},
          {"source", summary.source},
          {"gpus", summary.gpus},
          {"nodes", summary.nodes},
          {"gpus_per_node", summary.gpus_per_node == 0 ? ordered_json(nullptr) : ordered_json(summary.gpus_per_node)},
          {"scale_up_domains", summary.domains},
          {"devices", summary.devices},
          {"links", summary.links},
          {"groups", groups},
          {"network", summary.network},
          {"routes",
           {{"scale_up", route_json(summary.scale_up_route)},
            {"scale_out", route_json(summary.scale_out_route)},
            {"farthest", route_json(summary.farthest_route)}}},
          {"bisection_Bps", summary.bisection_Bps},
          {"calibrated", summary.calibrated}};
}

std::string route_text(const std::optional<topo::RouteSummary>& route) {
  if (!route) return "-";
  return route->from + " -> " + route->to + ": " + std::to_string(route->hops) +
         (route->hops == 1 ? " link, " : " links, ") + topo::format_duration(route->latency_s) + ", bottleneck " +
         topo::format_bandwidth(route->bottleneck_Bps);
}

void print_summary(std::ostream& out, const topo::ClusterSummary& summary) {
  out << summary.name << (summary.description.empty() ? "" : " — " + summary.description) << "\n\n";
  print_fields(out, {{"source", summary.source},
                     {"GPUs", std::to_string(summary.gpus)},
                     {"nodes", std::to_string(summary.nodes)},
                     {"GPUs per node", summary.gpus_per_node ? std::to_string(summary.gpus_per_node) : "mixed"},
                     {"scale-up domains", std::to_string(summary.domains)},
                     {"network", summary.network},
                     {"bisection", topo::format_bandwidth(summary.bisection_Bps) + " per direction"},
                     {"graph", std::to_string(summary.devices) + " devices, " + std::to_string(summary.links) +
                                   " directed links"},
                     {"calibrated", summary.calibrated ? "yes" : "no"}});
  out << "\nNode groups\n";
  Table groups({"group", "nodes", "GPU", "architecture", "host CPU", "GPUs/node", "scale-up fabric", "NICs"});
  for (const topo::GroupSummary& group : summary.groups) {
    groups.add_row({group.name, std::to_string(group.count), group.gpu_model, group.architecture, group.host_cpu,
                    std::to_string(group.gpus_per_node), group.fabric, group.nics});
  }
  groups.print(out);
  out << "\nTiers (per GPU, per direction)\n";
  Table tiers({"tier", "bandwidth per GPU", "example route"});
  const topo::GroupSummary& first = summary.groups.front();
  tiers.add_row({"scale-up", topo::format_bandwidth(first.scale_up_per_gpu_Bps), route_text(summary.scale_up_route)});
  tiers.add_row({"scale-out",
                 first.scale_out_per_gpu_Bps > 0 ? topo::format_bandwidth(first.scale_out_per_gpu_Bps) : "-",
                 route_text(summary.scale_out_route)});
  if (summary.farthest_route) tiers.add_row({"farthest from GPU 0", "", route_text(summary.farthest_route)});
  tiers.print(out);
}

// topo show's cluster: its figures, node groups and tiers (table), or summary_json (json).
class ClusterReport : public Report {
 public:
  explicit ClusterReport(const topo::ClusterSummary& summary) : summary_(summary) {}
  void print_table(std::ostream& out) const override { print_summary(out, summary_); }
  ordered_json json() const override { return summary_json(summary_); }

 private:
  const topo::ClusterSummary& summary_;
};

// topo list's presets: name and description.
class PresetsReport : public Report {
 public:
  explicit PresetsReport(const std::vector<topo::Preset>& presets) : presets_(presets) {}
  void print_table(std::ostream& out) const override {
    Table table({"preset", "description"});
    for (const topo::Preset& preset : presets_) table.add_row({preset.name, preset.description});
    table.print(out);
  }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const topo::Preset& preset : presets_) {
      list.push_back({{"name", preset.name}, {"description", preset.description}});
    }
    return list;
  }

 private:
  const std::vector<topo::Preset>& presets_;
};

void add_list(CLI::App& topo_command) {
  auto* command = topo_command.add_subcommand("list", "List the cluster presets compiled into treering");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback([format] { make_reporter(*format, std::cout)->report(PresetsReport(topo::cluster_presets())); });
}

void add_check(CLI::App& topo_command) {
  auto* command = topo_command.add_subcommand("check", "Check cluster files (exit 0 when all are valid, 2 otherwise)");
  auto files = std::make_shared<std::vector<std::string>>();
  command->add_option("files", *files, "YAML files or preset names")->required();
  command->callback([files] {
    int failures = 0;
    for (const std::string& file : *files) {
      try {
        topo::Topology topology(topo::load_cluster(file));
        std::cout << file << ": ok (" << topology.gpu_count() << " GPUs in " << count_of(topology.node_count(), "node")
                  << ")\n";
      } catch (const topo::InputError& error) {
        std::cerr << error.what() << '\n';
        ++failures;
      }
    }
    if (failures > 0) throw ExitWith{2};
  });
}

void add_show(CLI::App& topo_command) {
  auto* command = topo_command.add_subcommand("show", "Show a cluster: GPUs, nodes, tiers, routes, bisection");
  auto args = std::make_shared<ClusterArgs>();
  auto format = std::make_shared<OutputFormat>();
  add_cluster_positional(*command, *args);
  add_format_option(*command, *format);
  command->callback([args, format] {
    const topo::ClusterSummary summary = topo::summarize(load_topology(*args));
    make_reporter(*format, std::cout)->report(ClusterReport(summary));
  });
}

void add_dot(CLI::App& topo_command) {
  auto* command = topo_command.add_subcommand("dot", "Write the cluster graph in Graphviz format");
  auto args = std::make_shared<ClusterArgs>();
  auto output = std::make_shared<std::string>();
  add_cluster_positional(*command, *args);
  command->add_option("-o,--output", *output, "Write to this file instead of standard output");
  command->callback([args, output] {
    std::string dot = topo::to_dot(load_topology(*args));
    if (output->empty()) {
      std::cout << dot;
      return;
    }
    topo::write_output_file(*output, dot);
    std::cerr << "wrote " << *output << " (render: dot -Tsvg " << *output << " -o cluster.svg)\n";
  });
}

}  // namespace

void add_topo_commands(CLI::App& app) {
  auto* topo_command = app.add_subcommand("topo", "Cluster descriptions: list presets, check, show, export the graph");
  topo_command->require_subcommand(1);
  add_list(*topo_command);
  add_check(*topo_command);
  add_show(*topo_command);
  add_dot(*topo_command);
}

}  // namespace treering::cli
