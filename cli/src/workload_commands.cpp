// treering workload list | show
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
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

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the workload presets");
  auto format = std::make_shared<std::string>("table");
  add_format_option(*command, *format);
  command->callback([format] {
    const auto& presets = model::workload_presets();
    if (*format == "json") {
      ordered_json list = ordered_json::array();
      for (const Workload& workload : presets) list.push_back(workload_json(workload));
      std::cout << list.dump(2) << '\n';
      return;
    }
    Table table({"workload", "layers", "q heads", "kv heads", "head dim", "params", "KV cache/token", "description"});
    for (const Workload& workload : presets) {
      table.add_row({workload.name, std::to_string(workload.layers), std::to_string(workload.query_heads),
                     std::to_string(workload.kv_heads), std::to_string(workload.head_dim),
                     parameters_text(workload.parameters),
                     topologies::format_bytes(model::kv_cache_bytes_per_token(workload)), workload.description});
    }
    table.print(std::cout);
  });
}

void add_show(CLI::App& parent) {
  auto* command = parent.add_subcommand("show", "Show one workload preset");
  auto name = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  command->add_option("workload", *name, "A workload preset (treering workload list) or a YAML file")->required();
  add_format_option(*command, *format);
  command->callback([name, format] {
    const Workload workload = load_workload(*name);
    if (*format == "json") {
      std::cout << workload_json(workload).dump(2) << '\n';
      return;
    }
    std::cout << workload.name << " — " << workload.description << "\n\n";
    print_fields(std::cout, {{"layers", std::to_string(workload.layers)},
                             {"query heads", std::to_string(workload.query_heads)},
                             {"KV heads", std::to_string(workload.kv_heads)},
                             {"head dim", std::to_string(workload.head_dim)},
                             {"hidden size", std::to_string(workload.hidden_size)},
                             {"parameters", parameters_text(workload.parameters)},
                             {"dtype", workload.dtype},
                             {"batch", std::to_string(workload.batch)},
                             {"KV cache per token",
                              topologies::format_bytes(model::kv_cache_bytes_per_token(workload)) + " (all layers)"},
                             {"source", workload.source}});
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
