// The subcommands of `treering`. Each add_* registers a subcommand whose callback does the work;
// library errors propagate to main(), which prints them and chooses the exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace treering::cli {

// Thrown by a command that has already printed what went wrong, to leave with this exit code.
struct ExitWith {
  int code;
};

void add_topo_commands(CLI::App& app);
void add_workload_commands(CLI::App& app);
void add_impl_commands(CLI::App& app);
void add_info_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_simulate_commands(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_crossover_command(CLI::App& app);
void add_sensitivity_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_plot_command(CLI::App& app);

// `treering` with no arguments: the default comparison, with its files in treering-out/.
void run_main_job();

}  // namespace treering::cli
