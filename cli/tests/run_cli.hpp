// Runs the built `treering` binary from the source directory and captures what it prints.
#pragma once

#include <string>

namespace treering::cli::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `arguments` is appended to the binary's path in a shell command run from TREERING_SOURCE_DIR.
CliResult run_treering(const std::string& arguments);
// The same for another program (a path).
CliResult run_program(const std::string& program, const std::string& arguments);

// The whole text of a file a command wrote ("" when it cannot be read).
std::string read_file(const std::string& path);

}  // namespace treering::cli::testing
