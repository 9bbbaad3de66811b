#include "run_cli.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace treering::cli::testing {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CliResult run_treering(const std::string& arguments) { return run_program(TREERING_CLI, arguments); }

CliResult run_program(const std::string& program, const std::string& arguments) {
  static int counter = 0;
  const auto directory = std::filesystem::path(TREERING_BINARY_DIR) / "tests" / "cli-output";
  std::filesystem::create_directories(directory);
  const std::string stem = std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const auto out_path = directory / (stem + ".out");
  const auto err_path = directory / (stem + ".err");
  const std::string command = "cd '" TREERING_SOURCE_DIR "' && '" + program + "' " + arguments + " >'" +
                              out_path.string() + "' 2>'" + err_path.string() + "' </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace treering::cli::testing
