#include "cli_choices.hpp"

#include <optional>

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

}  // namespace treering::realrun::app
