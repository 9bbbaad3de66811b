// treering: predict, simulate and measure tree vs ring attention decoding on GPU clusters.
// Exit codes: 0 success; 1 an internal failure; 2 bad input (a file, a value or the command line).
#include <iostream>

#include "commands.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/output_file.hpp"

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

int run(int argc, char** argv) {
  CLI::App app{"treering: predict, simulate and measure tree vs ring attention decoding on GPU clusters", "treering"};
  app.set_version_flag("--version", "treering 0.1.0");
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << "error: " << error.what() << "\n(run 'treering --help' or 'treering COMMAND --help')\n";
    return kExitBadInput;
  }
  if (argc == 1) treering::cli::run_main_job();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  treering::topologies::remove_unfinished_outputs_on_signals();  // Ctrl-C leaves every output file as it was
  const treering::topologies::InputFilesScope inputs;  // no output of the command may replace one of its inputs
  try {
    return run(argc, argv);
  } catch (const treering::cli::ExitWith& exit) {
    return exit.code;
  } catch (const treering::topologies::InputError& error) {
    std::cerr << error.what() << '\n';
    return kExitBadInput;
  } catch (const std::invalid_argument& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory (try a smaller cluster: fewer --nodes)\n";
    return kExitInternal;
  } catch (const std::exception& error) {
    std::cerr << "internal error: " << error.what() << '\n';
    return kExitInternal;
  }
}
