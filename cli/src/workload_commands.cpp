// treering workload list | show
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
using treering::model::Workload;

ordered_json workload_json(const Workload& workload) {
  return {{"name", workload.name},
          {"description", workload.description},
          {"source", workload.source},
          {"layers", workload.layers},
          {"query_heads", workload.query_heads},
          {"kv_heads", workload.kv_heads},
          {"head_dim", workload.head_dim},
          {"hidden_size", workload.hidden_size},
          {"parameters", workload.parameters},
          {"dtype", workload.dtype},
          {"dtype_bytes", workload.dtype_bytes},
          {"batch", workload.batch},
          {"kv_cache_bytes_per_token", model::kv_cache_bytes_per_token(workload)}};
}

std::string parameters_text(double parameters) {
  if (parameters <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3gB", parameters / 1e9);
  return text;
}

// workload list's presets: their shapes (table), or each one's workload_json (json).
class WorkloadsReport : public Report {
 public:
  explicit WorkloadsReport(const std::vector<Workload>& presets) : presets_(presets) {}
  void print_table(std::ostream& out) const override {
    Table table({"workload", "layers", "q heads", "kv heads", "head dim", "params", "KV cache/token", "description"});
    for (const Workload& workload : presets_) {
      table.add_row({workload.name, std::to_string(workload.layers), std::to_string(workload.query_heads),
                     std::to_string(workload.kv_heads), std::to_string(workload.head_dim),
                     parameters_text(workload.parameters),
                     topologies::format_bytes(model::kv_cache_bytes_per_token(workload)), workload.description});
    }
    table.print(out);
  }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const Workload& workload : presets_) list.push_back(workload_json(workload));
    return list;
  }

 private:
  const std::vector<Workload>& presets_;
};

// workload show's workload: its fields (table), or workload_json (json).
class WorkloadReport : public Report {
 public:
  explicit WorkloadReport(const Workload& workload) : workload_(workload) {}
  void print_table(std::ostream& out) const override {
    const Workload& w = workload_;
    out << w.name << " — " << w.description << "\n\n";
    print_fields(
        out, {{"layers", std::to_string(w.layers)},
              {"query heads", std::to_string(w.query_heads)},
              {"KV heads", std::to_string(w.kv_heads)},
              {"head dim", std::to_string(w.head_dim)},
              {"hidden size", std::to_string(w.hidden_size)},
              {"parameters", parameters_text(w.parameters)},
              {"dtype", w.dtype},
              {"batch", std::to_string(w.batch)},
              {"KV cache per token", topologies::format_bytes(model::kv_cache_bytes_per_token(w)) + " (all layers)"},
              {"source", w.source}});
  }
  ordered_json json() const override { return workload_json(workload_); }

 private:
  const Workload& workload_;
};

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the workload presets");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback(
      [format] { make_reporter(*format, std::cout)->report(WorkloadsReport(model::workload_presets())); });
}

void add_show(CLI::App& parent) {
  auto* command = parent.add_subcommand("show", "Show one workload preset");
  auto name = std::make_shared<std::string>();
  auto format = std::make_shared<OutputFormat>();
  command->add_option("workload", *name, "A workload preset (treering workload list) or a YAML file")->required();
  add_format_option(*command, *format);
  command->callback([name, format] {
    const Workload workload = load_workload(*name);
    make_reporter(*format, std::cout)->report(WorkloadReport(workload));
  });
}

}  // namespace

void add_workload_commands(CLI::App& app) {
  auto* command = app.add_subcommand("workload", "Decoding workloads: model shapes");
  command->require_subcommand(1);
  add_list(*command);
  add_show(*command);
}

}  // namespace treering::cli
