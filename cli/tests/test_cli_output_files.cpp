// Files the commands write are replaced whole at the end: the output may be one of the inputs, and a failure on
// the way leaves the old file as it was.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

namespace {

const std::string kDir = std::string(TREERING_BINARY_DIR) + "/tests/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A cluster file of our own: the shipped DGX H100 preset, copied.
std::string fresh_cluster_copy(const std::string& name) {
  const std::string path = kDir + name;
  std::ofstream(path, std::ios::binary) << read(std::string(TREERING_SOURCE_DIR) + "/topologies/clusters/dgx-h100.yaml");
  return path;
}

}  // namespace

TEST_CASE("calibrate --cluster cal.yaml -o cal.yaml reads the cluster before replacing it") {
  const std::string cal = fresh_cluster_copy("output-files-cal.yaml");
  const std::string before = read(cal);
  REQUIRE(before.find("calibration:") == std::string::npos);
  auto result = run_treering("calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster " + cal +
                             " --nodes 2 -o " + cal);
  REQUIRE(result.exit_code == 0);
  const std::string after = read(cal);
  CHECK(after.find("calibration:") != std::string::npos);          // the fit was written
  CHECK(after.find(before.substr(0, 40)) != std::string::npos);     // onto the cluster it read
  // The written file is a cluster the other commands load.
  CHECK(run_treering("topo show " + cal).exit_code == 0);
}

TEST_CASE("calibrate whose fit fails leaves the output file as it was") {
  const std::string cal = fresh_cluster_copy("output-files-keep.yaml");
  const std::string before = read(cal);
  auto result = run_treering("calibrate validate/tests/data/sendrecv-one-size.json --cluster " + cal + " -o " + cal);
  CHECK(result.exit_code != 0);
  CHECK(result.err.find("needs at least two different sizes") != std::string::npos);
  CHECK(read(cal) == before);
}

TEST_CASE("an output path in a missing directory fails before any work, naming the path") {
  auto result = run_treering("calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100 -o " + kDir +
                             "no-such-dir/cal.yaml");
  CHECK(result.exit_code != 0);
  CHECK(result.err.find("no-such-dir/cal.yaml: error: cannot write the file") != std::string::npos);
}
