// Every file in topologies/tests/bad/ is a cluster description with one mistake. Its first line says
// where the loader must point and what it must say:
//   # expect: LINE:COL: MESSAGE
// LINE:COL were counted by hand in the file (from 1, the expectation line included).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/topologies/workload_spec.hpp"

namespace fs = std::filesystem;
using namespace treering::topologies;

namespace {

std::string expectation_of(const fs::path& file) {
  std::ifstream in(file);
  std::string first_line;
  std::getline(in, first_line);
  const std::string prefix = "# expect: ";
  REQUIRE_MESSAGE(first_line.rfind(prefix, 0) == 0, file.string() << " must start with '" << prefix << "'");
  return first_line.substr(prefix.size());
}

std::string error_of(const fs::path& file, bool workload = false) {
  try {
    if (workload) {
      load_workload_file(file.string());
    } else {
      Topology topology(load_cluster_file(file.string()));
    }
  } catch (const InputError& error) {
    CHECK(error.location().file == file.string());
    return std::to_string(error.location().line) + ":" + std::to_string(error.location().column) + ": " +
           error.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("each bad cluster file fails at the expected line and column with the expected message") {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "topologies" / "tests" / "bad";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 25);
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    CHECK(error_of(file) == expectation_of(file));
  }
}

TEST_CASE("the error text is in the compiler's format") {
  const fs::path file = fs::path(TREERING_SOURCE_DIR) / "topologies" / "tests" / "bad" / "unknown-key-gpu.yaml";
  try {
    load_cluster_file(file.string());
    FAIL("no error");
  } catch (const InputError& error) {
    const std::string text = error.what();
    CHECK(text.rfind(file.string() + ":", 0) == 0);
    CHECK(text.find(": error: ") != std::string::npos);
  }
}

TEST_CASE("a missing file is an error naming it") {
  CHECK_THROWS_WITH_AS(load_cluster_file("/nonexistent/cluster.yaml"),
                       "/nonexistent/cluster.yaml: error: cannot open the file", InputError);
}

TEST_CASE("a directory is not a cluster file") {
  const std::string directory = std::string(TREERING_SOURCE_DIR) + "/topologies";
  CHECK_THROWS_WITH_AS(load_cluster_file(directory), (directory + ": error: is a directory, not a file").c_str(),
                       InputError);
}

TEST_CASE("each bad workload file fails where its first line says") {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "topologies" / "tests" / "bad-workloads";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(directory)) {
    CAPTURE(entry.path().filename().string());
    ++files;
    CHECK(error_of(entry.path(), true) == expectation_of(entry.path()));
  }
  CHECK(files >= 4);
}

TEST_CASE("the example workload file loads") {
  Workload qwen = load_workload_file(std::string(TREERING_SOURCE_DIR) + "/topologies/workloads/qwen2.5-7b.yaml");
  CHECK(qwen.layers == 28);
  CHECK(qwen.kv_heads == 4);
  CHECK(qwen.hidden_size == 3584);  // 28 x 128
  CHECK(qwen.parameters == doctest::Approx(7.61e9).scale(1e-12));
  CHECK(qwen.batch == 1);
}

TEST_CASE("a device, a pipe or a huge file is refused before it is read") {
  // /dev/zero would be read for seconds (1 GB) and fail with "out of memory"; it is not a regular file.
  CHECK_THROWS_WITH_AS(load_cluster_file("/dev/zero"),
                       "/dev/zero: error: is not a regular file (a device, pipe or socket)", InputError);
  CHECK_THROWS_WITH_AS(load_workload_file("/dev/zero"),
                       "/dev/zero: error: is not a regular file (a device, pipe or socket)", InputError);
  const fs::path big = fs::temp_directory_path() / ("treering-big-input-" + std::to_string(::getpid()) + ".yaml");
  { std::ofstream(big) << "name: x\n"; }
  fs::resize_file(big, static_cast<std::uintmax_t>(kMostInputFileBytes) + 1);  // sparse: nothing is written
  CHECK_THROWS_WITH_AS(load_cluster_file(big.string()),
                       (big.string() + ": error: is 67108865 bytes, more than an input file may hold (64 MiB)").c_str(),
                       InputError);
  fs::remove(big);
}
