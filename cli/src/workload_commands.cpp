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

// workload list's table: one preset a row.
void print_presets(std::ostream& out, const std::vector<Workload>& presets) {
  Table table({"workload", "layers", "q heads", "kv heads", "head dim", "params", "KV cache/token", "description"});
  for (const Workload& workload : presets) {
    table.add_row({workload.name, std::to_string(workload.layers), std::to_string(workload.query_heads),
                   std::to_string(workload.kv_heads), std::to_string(workload.head_dim),
                   parameters_text(workload.parameters),
                   topologies::format_bytes(model::kv_cache_bytes_per_token(workload)), workload.description});
  }
  table.print(out);
}

// workload show's table: the fields, one a line.
void print_workload(std::ostream& out, const Workload& w) {
  out << w.name << " — " << w.description << "\n\n";
  print_fields(out,
               {{"layers", std::to_string(w.layers)},
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

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the workload presets");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback([format] {
    const std::vector<Workload>& presets = model::workload_presets();
    make_reporter(*format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_presets(out, presets); },
                                 .csv = {},
                                 .json =
                                     [&] {
                                       ordered_json list = ordered_json::array();
                                       for (const Workload& workload : presets) list.push_back(workload_json(workload));
                                       return list;
                                     }}));
  });
}

void add_show(CLI::App& parent) {
  auto* command = parent.add_subcommand("show", "Show one workload preset");
  auto name = std::make_shared<std::string>();
  auto format = std::make_shared<OutputFormat>();
  command->add_option("workload", *name, "A workload preset (treering workload list) or a YAML file")->required();
  add_format_option(*command, *format);
  command->callback([name, format] {
    const Workload workload = load_workload(*name);
    make_reporter(*format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_workload(out, workload); },
                                 .csv = {},
                                 .json = [&] { return workload_json(workload); }}));
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
