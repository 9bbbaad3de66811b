#include "cli_choices.hpp"

#include <optional>

#include "treering/model/weights.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {

CLI::Option* add_backend_option(CLI::App& command, model::RealrunBackend& backend, const std::string& help,
                                const std::function<std::string(const std::string&)>& refusal) {
  return command
      .add_option_function<std::string>(
          "--backend",
          [&backend, refusal](const std::string& name) {
            if (name != "cpu" && name != "cuda") throw topologies::InputError(refusal(name));
            backend = model::parse_realrun_backend(name);
          },
          help)
      ->default_str(model::to_string(backend));
}

std::string cpu_or_cuda(const std::string& name) { return "--backend " + name + ": cpu or cuda"; }

CLI::Option* add_bench_kind_option(CLI::App& command, BenchKind& kind) {
  return command
      .add_option_function<std::string>(
          "what", [&kind](const std::string& name) { kind = find_bench_kind(name).value(); },
          "allreduce | allgather | sendrecv | hbm | attention")
      ->required()
      ->check(CLI::Validator(
          [](const std::string& name) -> std::string {
            if (find_bench_kind(name)) return "";
            return "unknown benchmark '" + name + "' (choose allreduce, allgather, sendrecv, hbm or attention)";
          },
          "BENCHMARK"));
}

model::Workload workload_named(const std::string& name_or_path) {
  const bool json = name_or_path.ends_with(".json");
  if (!json && !name_or_path.ends_with(".yaml") && !name_or_path.ends_with(".yml"))
    return model::find_workload(name_or_path);
  model::Workload w =
      json ? topologies::load_hf_config_file(name_or_path) : topologies::load_workload_file(name_or_path);
  model::complete_weights(w);
  model::validate(w);
  return w;
}

}  // namespace treering::realrun::app
