// treering's main with its commands as a parameter (main.cpp gives the real ones).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace treering::cli {

// Parses the command line with the commands add_commands registers and runs the one named, or main_job when there
// are no arguments. Returns the exit code: 0 success; 1 an internal failure; 2 bad input (a file, a value or the
// command line). Prints an escaping error as topologies::error_exit maps it (an ExitWith leaves with its code).
int command_line_main(int argc, char** argv, const std::function<void(CLI::App&)>& add_commands,
                      const std::function<void()>& main_job);

}  // namespace treering::cli
