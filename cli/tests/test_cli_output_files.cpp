// Files the commands write are replaced whole at the end, and never one the same run reads (by any name): a failure
// on the way, or an output that is an input, leaves the old file as it was, with exit code 2 naming the path.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "run_cli.hpp"

using treering::cli::testing::read_file;
using treering::cli::testing::run_treering;

namespace {

const std::string kDir = std::string(TREERING_BINARY_DIR) + "/tests/";

// A cluster file of our own: the shipped DGX H100 preset, copied.
std::string fresh_cluster_copy(const std::string& name) {
  const std::string path = kDir + name;
  std::ofstream(path, std::ios::binary) << read_file(std::string(TREERING_SOURCE_DIR) +
                                                     "/topologies/clusters/dgx-h100.yaml");
  return path;
}

// Runs ARGUMENTS, which must be refused for writing onto OUTPUT (an input of the run); INPUT must be unchanged.
void check_refused(const std::string& arguments, const std::string& output, const std::string& input) {
  CAPTURE(arguments);
  const std::string before = read_file(input);
  const auto result = run_treering(arguments);
  CHECK(result.exit_code == 2);
  CHECK(result.err.find(output + ": error: is also an input of this run") != std::string::npos);
  CHECK(read_file(input) == before);
}

}  // namespace

TEST_CASE("every output flag refuses a file the same run reads, and the file is left as it was") {
  const std::string log = kDir + "output-files-g2.log";
  std::ofstream(log, std::ios::binary) << read_file(std::string(TREERING_SOURCE_DIR) +
                                                    "/validate/data/nccl-tests-allreduce-h100-2node-ndr.log");
  const std::string in = fresh_cluster_copy("output-files-in.yaml");
  check_refused("calibrate " + log + " --cluster dgx-h100 --nodes 2 -o " + log, log, log);
  check_refused("calibrate " + log + " --cluster " + in + " --nodes 2 -o " + in, in, in);
  check_refused("topo dot " + in + " -o " + in, in, in);
  check_refused("simulate --cluster " + in + " --algo tree --seq-len 1M --trace " + in, in, in);
  check_refused("sweep --cluster " + in + " --seq-len 80k:160k:x2 --format csv -o " + in, in, in);
}

TEST_CASE("an input is refused as output by another spelling, a hard link and a symbolic link") {
  const std::string in = fresh_cluster_copy("output-files-names.yaml");
  const std::string respelt = kDir + "../tests/./output-files-names.yaml";
  check_refused("topo dot " + in + " -o " + respelt, respelt, in);
  const std::string hard = kDir + "output-files-hard.yaml";
  const std::string soft = kDir + "output-files-soft.yaml";
  std::remove(hard.c_str());
  std::remove(soft.c_str());
  REQUIRE(::link(in.c_str(), hard.c_str()) == 0);
  REQUIRE(::symlink(in.c_str(), soft.c_str()) == 0);
  check_refused("topo dot " + in + " -o " + hard, hard, in);
  check_refused("sweep --cluster " + in + " --seq-len 80k --format csv -o " + soft, soft, in);
  // plot reads a CSV and writes a figure: a figure's name linked to the rows' file is refused too.
  const std::string rows = kDir + "output-files-rows.csv";
  const std::string figure = kDir + "output-files-fig.svg";
  std::ofstream(rows) << "algo,seq_len,latency_s\ntree,80000,1e-4\ntree,160000,2e-4\n";
  std::remove(figure.c_str());
  REQUIRE(::symlink(rows.c_str(), figure.c_str()) == 0);
  check_refused("plot " + rows + " --x seq_len --y latency_s -o " + figure, figure, rows);
  // A file that is not an input is written (the refusal is by identity, not by a similar name).
  CHECK(run_treering("topo dot " + in + " -o " + kDir + "output-files-names.dot").exit_code == 0);
}

TEST_CASE("an output that cannot be written is bad input (exit 2) naming the path") {
  const auto result = run_treering("topo dot dgx-h100 -o /dev/full");
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("/dev/full: error: cannot write the file (No space left on device)") != std::string::npos);
  CHECK(result.err.find("internal error") == std::string::npos);
}

TEST_CASE("calibrate whose fit fails leaves the output file as it was") {
  const std::string cal = fresh_cluster_copy("output-files-keep.yaml");
  const std::string before = read_file(cal);
  auto result = run_treering("calibrate validate/tests/data/sendrecv-one-size.json --cluster " + cal + " -o " + cal);
  CHECK(result.exit_code != 0);
  CHECK(result.err.find("needs at least two different sizes") != std::string::npos);
  CHECK(read_file(cal) == before);
}

TEST_CASE("an output path in a missing directory fails before any work, naming the path") {
  auto result = run_treering("calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100 -o " +
                             kDir + "no-such-dir/cal.yaml");
  CHECK(result.exit_code != 0);
  CHECK(result.err.find("no-such-dir/cal.yaml: error: cannot write the file") != std::string::npos);
}
