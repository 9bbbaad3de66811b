// Bad command lines and bad files: a clear message on stderr and exit code 2, never a crash.
#include <doctest/doctest.h>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("every subcommand has --help") {
  for (const char* command : {"--help", "topo --help", "topo list --help", "topo check --help", "topo show --help",
                              "topo dot --help", "workload --help", "workload list --help", "workload show --help", "collective --help", "predict --help", "simulate --help", "compare --help",
                              "info --help"}) {
    CAPTURE(command);
    auto result = run_treering(command);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("Usage:") != std::string::npos);
  }
}

TEST_CASE("a bad cluster file: the compiler-style message and exit 2") {
  auto result = run_treering("topo show topologies/tests/bad/unknown-key-gpu.yaml");
  CHECK(result.exit_code == 2);
  CHECK(result.err.rfind("topologies/tests/bad/unknown-key-gpu.yaml:", 0) == 0);
  CHECK(result.err.find(": error: unknown key") != std::string::npos);
  CHECK(result.out.empty());
}

TEST_CASE("unknown presets, files and options") {
  auto unknown = run_treering("topo show dgx-h1000");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.rfind("error: unknown cluster 'dgx-h1000'", 0) == 0);
  auto missing = run_treering("topo show /nonexistent/x.yaml");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "/nonexistent/x.yaml: error: cannot open the file\n");
  auto option = run_treering("topo show dgx-h100 --nodez 4");
  CHECK(option.exit_code == 2);
  CHECK(option.err.rfind("error: ", 0) == 0);
  auto format = run_treering("topo show dgx-h100 --format xml");
  CHECK(format.exit_code == 2);
  auto nodes = run_treering("topo show dgx-h100 --nodes 0");
  CHECK(nodes.exit_code == 2);
  CHECK(nodes.err == "error: --nodes must be at least 1, got 0\n");
  auto word = run_treering("topo show dgx-h100 --nodes many");
  CHECK(word.exit_code == 2);
  auto gpus = run_treering("topo show dgx-h100 --gpus-per-node 9");
  CHECK(gpus.exit_code == 2);
  CHECK(gpus.err == "error: --gpus-per-node 9 is outside 1-8 for node group 'dgx-h100'\n");
}

TEST_CASE("a missing subcommand or an unknown one is a usage error") {
  CHECK(run_treering("topo").exit_code == 2);
  CHECK(run_treering("frobnicate").exit_code == 2);
  CHECK(run_treering("topo check").exit_code == 2);  // no files
}

TEST_CASE("treering with no arguments shows help and succeeds") {
  auto result = run_treering("");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("topo") != std::string::npos);
}
