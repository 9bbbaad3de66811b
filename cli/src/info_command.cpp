// treering info: what this build contains.
#include <iostream>

#include "commands.hpp"
#include "table.hpp"
#include "treering/realrun/build_info.hpp"
#include "treering/sim/engine_info.hpp"

namespace treering::cli {

void add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand("info", "Show what this build of treering contains (SimGrid, CUDA, NCCL, MPI)");
  command->callback([] {
    realrun::BuildInfo info = realrun::build_info();
    auto compiled = [](bool yes, const std::string& version) {
      return yes ? "yes" + (version.empty() ? std::string() : " (" + version + ")") : std::string("no (left out)");
    };
    print_fields(std::cout, {{"treering", "0.1.0"},
                             {"simulator", "event loop, SimGrid's sharing rules (SimGrid " + sim::simgrid_version() +
                                               " actors with simulate --simgrid)"},
                             {"CUDA", compiled(info.cuda_compiled, info.cuda_runtime_version)},
                             {"NCCL", compiled(info.nccl_compiled, info.nccl_version)},
                             {"MPI", compiled(info.mpi_compiled, info.mpi_library)},
                             {"GPUs", info.cuda_device_status}});
  });
}

}  // namespace treering::cli
