// Bad command lines and bad files: a clear message on stderr and exit code 2, never a crash.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

// The subcommands `treering --help` lists (the lines under "Subcommands:", each "  NAME  description").
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream lines(help.substr(help.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

TEST_CASE("every subcommand has --help") {
  const auto top = run_treering("--help");
  REQUIRE(top.out.find("Subcommands:") != std::string::npos);
  std::vector<std::string> commands{
      "--help",          "topo list --help",     "topo check --help",    "topo show --help",
      "topo dot --help", "workload list --help", "workload show --help", "impl list --help",
      "impl show --help"};
  for (const std::string& name : listed_subcommands(top.out)) commands.push_back(name + " --help");
  CHECK(commands.size() == 9 + 16);  // topo, workload, impl, predict, ..., plot, info: the 16 commands treering has
  for (const std::string& command : commands) {
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
  for (const char* command : {"topo check /dev/zero", "validate --cluster dgx-h100 /dev/zero",
                              "calibrate --cluster dgx-h100 /dev/zero -o x.yaml",
                              "predict --cluster dgx-h100 --seq-len 8k --workload /dev/zero"}) {
    CAPTURE(command);
    auto device = run_treering(command);  // was: 1 GB read for 9 s then "out of memory", exit 1 (validate: forever)
    CHECK(device.exit_code == 2);
    CHECK(device.err == "/dev/zero: error: is not a regular file (a device, pipe or socket)\n");
  }
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

TEST_CASE("treering --help lists the commands and succeeds") {
  // (With no arguments it runs the main job: ctest cli/main-job, in a directory of its own.)
  auto result = run_treering("--help");
  CHECK(result.exit_code == 0);
  for (const char* command : {"topo", "predict", "simulate", "sweep", "crossover", "calibrate", "validate"}) {
    CHECK_MESSAGE(result.out.find(command) != std::string::npos, command);
  }
}

TEST_CASE("simulate and compare refuse bad decode options as predict does") {
  for (const char* command : {"simulate", "compare", "predict"}) {
    CAPTURE(command);
    const std::string base = std::string(command) + " --cluster dgx-h100 --nodes 1 --seq-len 80k";
    auto tokens = run_treering(base + " --tokens 0");
    CHECK(tokens.exit_code == 2);
    CHECK(tokens.err.find("--tokens") != std::string::npos);
    auto batch = run_treering(base + " --batch 0");
    CHECK(batch.exit_code == 2);
    CHECK(batch.err.find("--batch must be at least 1") != std::string::npos);
    auto algo = run_treering(base + " --algo spiral");
    CHECK(algo.exit_code == 2);
    CHECK(algo.err.find("spiral") != std::string::npos);
    auto gpus = run_treering(base + " --gpus 0,99");
    CHECK(gpus.exit_code == 2);
  }
  auto trace =
      run_treering("simulate --cluster dgx-h100 --nodes 1 --seq-len 80k --algo ring --trace /no/such/dir/t.json");
  CHECK(trace.exit_code == 2);
  CHECK(trace.err.find("/no/such/dir/t.json") != std::string::npos);
}

TEST_CASE("sweep, crossover, sensitivity and tune: bad input exits 2 with a reason") {
  for (const std::string base :
       {"sweep --cluster dgx-h100 --seq-len 80k", "crossover --cluster dgx-h100 --seq-len 80k",
        "sensitivity --cluster dgx-h100 --seq-len 80k", "tune --cluster dgx-h100 --seq-len 80k"}) {
    CAPTURE(base);
    const std::string command = base.substr(0, base.find(' '));
    auto cluster = run_treering(command + " --cluster dgx-h1000 --seq-len 80k");
    CHECK(cluster.exit_code == 2);
    CHECK(cluster.err.rfind("error: unknown cluster 'dgx-h1000'", 0) == 0);
    auto length = run_treering(command + " --cluster dgx-h100 --seq-len 0");
    CHECK(length.exit_code == 2);
    CHECK(length.err.find("whole number of tokens") != std::string::npos);
    auto option = run_treering(base + " --nodez 4");
    CHECK(option.exit_code == 2);
    CHECK(option.err.rfind("error: ", 0) == 0);
    auto workload = run_treering(base + " --workload no-such-model");
    CHECK(workload.exit_code == 2);
    CHECK(workload.err.find("no-such-model") != std::string::npos);
    CHECK(cluster.out.empty());
  }
}

TEST_CASE("tune and sensitivity refuse the flags they would ignore") {
  // tune tries every combine and ranks per-token latencies; sensitivity's elasticities are per token too.
  for (const std::string extra : {"--tokens 100", "--prefill", "--algo ring"}) {
    CAPTURE(extra);
    auto tune = run_treering("tune --cluster dgx-h100 --seq-len 80k " + extra);
    CHECK(tune.exit_code == 2);
    CHECK(tune.err.find("not expected") != std::string::npos);
  }
  for (const std::string extra : {"--tokens 100", "--prefill"}) {
    CAPTURE(extra);
    auto sensitivity = run_treering("sensitivity --cluster dgx-h100 --seq-len 80k " + extra);
    CHECK(sensitivity.exit_code == 2);
    CHECK(sensitivity.err.find("not expected") != std::string::npos);
  }
}

TEST_CASE("tune and sensitivity take one length, and their help says so") {
  for (const char* command : {"tune", "sensitivity"}) {
    CAPTURE(command);
    auto help = run_treering(std::string(command) + " --help");
    REQUIRE(help.exit_code == 0);
    CHECK(help.out.find("One context length") != std::string::npos);
    CHECK(help.out.find("lists 80k,1M") == std::string::npos);  // was advertised, then refused
  }
}
