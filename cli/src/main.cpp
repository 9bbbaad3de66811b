// treering: predict, simulate and measure tree vs ring attention decoding on GPU clusters.
// Exit codes: 0 success; 1 an internal failure; 2 bad input (a file, a value or the command line).
#include "command_line.hpp"
#include "commands.hpp"

namespace {

void add_commands(CLI::App& app) {
  treering::cli::add_topo_commands(app);
  treering::cli::add_workload_commands(app);
  treering::cli::add_impl_commands(app);
  treering::cli::add_predict_command(app);
  treering::cli::add_simulate_commands(app);
  treering::cli::add_sweep_command(app);
  treering::cli::add_crossover_command(app);
  treering::cli::add_sensitivity_command(app);
  treering::cli::add_tune_command(app);
  treering::cli::add_plan_command(app);
  treering::cli::add_plot_command(app);
  treering::cli::add_calibrate_command(app);
  treering::cli::add_validate_command(app);
  treering::cli::add_collective_command(app);
  treering::cli::add_info_command(app);
}

}  // namespace

int main(int argc, char** argv) {
  return treering::cli::command_line_main(argc, argv, add_commands, treering::cli::run_main_job);
}
