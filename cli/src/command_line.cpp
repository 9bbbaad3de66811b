// treering's main, with the commands it offers as a parameter: main.cpp passes the real ones; a test passes its
// own (a command that throws) to check, end to end, what the program prints and the exit code it returns.
#include "command_line.hpp"

#include <iostream>

#include "commands.hpp"
#include "treering/topologies/error_exit.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/output_file.hpp"

namespace treering::cli {
namespace {

constexpr int kExitBadInput = topologies::kExitBadInput;

int run(int argc, char** argv, const std::function<void(CLI::App&)>& add_commands,
        const std::function<void()>& main_job) {
  CLI::App app{"treering: predict, simulate and measure tree vs ring attention decoding on GPU clusters", "treering"};
  app.set_version_flag("--version", "treering 0.1.0");
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
  add_commands(app);
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
  if (argc == 1) main_job();
  return 0;
}

}  // namespace

int command_line_main(int argc, char** argv, const std::function<void(CLI::App&)>& add_commands,
                      const std::function<void()>& main_job) {
  topologies::remove_unfinished_outputs_on_signals();  // Ctrl-C leaves every output file as it was
  const topologies::InputFilesScope inputs;            // no output of the command may replace one of its inputs
  try {
    return run(argc, argv, add_commands, main_job);
  } catch (const ExitWith& exit) {
    return exit.code;
  } catch (...) {
    const topologies::ErrorExit exit = topologies::error_exit(std::current_exception());
    std::cerr << exit.message << '\n';
    return exit.code;
  }
}

}  // namespace treering::cli
