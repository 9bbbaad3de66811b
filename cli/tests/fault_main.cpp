// treering's main (command_line_main) with commands that throw, for test_cli_internal_error.cpp: what a bug and bad
// input print, and the exit codes, through the program's own main rather than a hook in the real program.
#include <stdexcept>

#include "command_line.hpp"
#include "treering/topologies/input_error.hpp"

int main(int argc, char** argv) {
  const auto add_commands = [](CLI::App& app) {
    app.add_subcommand("broken-invariant", "Throws a std::logic_error")->callback([] {
      throw std::logic_error("injected: a phase without its operand");
    });
    app.add_subcommand("bad-value", "Throws an InputError")->callback([] {
      throw treering::topologies::InputError("--batch must be at least 1, got 0");
    });
  };
  return treering::cli::command_line_main(argc, argv, add_commands,
                                          [] { throw std::logic_error("injected in the main job"); });
}
