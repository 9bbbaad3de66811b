// Reading nccl-tests logs and CSVs: the shipped dataset both ways, and broken files with the position and
// message each must produce (stated on its first line, counted by hand).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "treering/topologies/input_error.hpp"
#include "treering/validate/measurements.hpp"

using namespace treering;

namespace {

const std::string kData = std::string(TREERING_SOURCE_DIR) + "/validate/data/nccl-tests-allreduce-h100-2node-ndr";

}  // namespace

TEST_CASE("the shipped nccl-tests log: 16 ranks (its Rank lines), all-reduce (busbw / algbw = 1.875), 32 sizes") {
  const auto rows = validate::read_collective_measurements(kData + ".log");
  REQUIRE(rows.size() == 32);  // 8 B to 16 GiB, doubling
  CHECK(rows.front().ranks == 16);
  CHECK(rows.front().op == model::CollectiveOp::allreduce);
  CHECK(rows.front().bytes == 8);
  CHECK(rows.front().time_s == doctest::Approx(24.70e-6).scale(1e-12));  // in-place 24.70 us beats out-of-place 68.52
  CHECK(rows.front().line == 27);  // 4 comment lines, '#', '# Using devices', 16 Rank lines, '#', 3 header lines
  CHECK(rows.back().bytes == 17179869184.0);
  CHECK(rows.back().time_s == doctest::Approx(68652e-6).scale(1e-12));
}

TEST_CASE("the CSV of the same figures reads the same (ranks from its bus factor)") {
  const auto log = validate::read_collective_measurements(kData + ".log");
  const auto csv = validate::read_collective_measurements(kData + ".csv");
  REQUIRE(csv.size() == log.size());
  for (size_t i = 0; i < csv.size(); ++i) {
    CHECK(csv[i].bytes == log[i].bytes);
    CHECK(csv[i].time_s == doctest::Approx(log[i].time_s).scale(1e-12));
    CHECK(csv[i].ranks == 16);
    CHECK(csv[i].op == model::CollectiveOp::allreduce);
  }
}

TEST_CASE("broken measurement files: FILE:LINE: error: and the reason") {
  const std::string dir = std::string(TREERING_SOURCE_DIR) + "/validate/tests/bad-measurements";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    REQUIRE(first.rfind("# expect: ", 0) == 0);
    const std::string expect = first.substr(10);
    const std::string expected = expect.rfind("error:", 0) == 0 ? path + ": " + expect : path + ":" + expect;
    CAPTURE(path);
    try {
      validate::read_collective_measurements(path);
      FAIL("no error");
    } catch (const topologies::InputError& error) {
      CHECK(std::string(error.what()).find(expected) == 0);
    }
    ++files;
  }
  CHECK(files == 8);
  CHECK_THROWS_AS(validate::read_collective_measurements(dir + "/missing.log"), topologies::InputError);
}

TEST_CASE("treering-realrun's bench JSON: the median of each size, the ranks from its provenance") {
  const std::string dir = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data";
  const auto rows = validate::read_collective_measurements(dir + "/realrun-bench-allreduce.json");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].op == model::CollectiveOp::allreduce);
  CHECK(rows[0].ranks == 2);
  CHECK(rows[0].algorithm == model::CollectiveAlgorithm::ring);  // the cpu backend's rings, named in the file
  CHECK(rows[1].bytes == 2097152);
  CHECK(rows[1].time_s == doctest::Approx(2.2193e-4).scale(1e-12));
  const std::string broken = std::string(TREERING_BINARY_DIR) + "/tests/broken-bench.json";
  std::ofstream(broken) << "{\"bench\": \"allreduce\", \"provenance\": {\"ranks\": 2}}";
  CHECK_THROWS_WITH_AS(validate::read_collective_measurements(broken), doctest::Contains("missing 'results'"),
                       topologies::InputError);
  std::ofstream(broken) << "{\"bench\": ";
  CHECK_THROWS_WITH_AS(validate::read_collective_measurements(broken), doctest::Contains("not valid JSON"),
                       topologies::InputError);
}

TEST_CASE("every nccl-tests binary: named by its first line, or told by its bus factor, redop and root") {
  const std::string dir = std::string(TREERING_SOURCE_DIR) + "/validate/tests/data";
  const auto alltoall = validate::read_collective_measurements(dir + "/alltoall-named.log");
  REQUIRE(alltoall.size() == 2);
  CHECK(alltoall[0].op == model::CollectiveOp::alltoall);  // "# Collective test starting: alltoall_perf"
  CHECK(alltoall[0].ranks == 16);
  CHECK(alltoall[0].time_s == doctest::Approx(49e-6).scale(1e-12));
  const auto scatter = validate::read_collective_measurements(dir + "/reduce-scatter-unnamed.log");
  CHECK(scatter.at(0).op == model::CollectiveOp::reduce_scatter);  // 22.94 / 26.21 = 7/8 with redop sum
  const auto sends = validate::read_collective_measurements(dir + "/sendrecv-unnamed.log");
  CHECK(sends.at(0).op == model::CollectiveOp::sendrecv);  // ratio 1, root -1
  CHECK(sends.at(0).ranks == 16);
}

TEST_CASE("the NCCL release a log ran: NCCL's 'NCCL version' line, nccl-tests' nccl-library, or nothing") {
  const std::string multinode = std::string(TREERING_SOURCE_DIR) + "/validate/data/nccl-multinode/";
  // "# NCCL version: 2.26.6+cuda12.8 (printed in the published output)"
  CHECK(validate::read_collective_measurements(multinode + "allgather-b200-2node-roce-verl-on-gke.log")
            .front()
            .nccl_release == "2.26.6");
  // "# nccl version: NCCL 2.29.7+cuda12.9 (printed in file)"
  CHECK(
      validate::read_collective_measurements(multinode + "sendrecv-b200-2node-ib-together.log").front().nccl_release ==
      "2.29.7");
  CHECK(validate::read_collective_measurements(multinode + "allgather-b200-2node-roce-gcp-a4.log")
            .front()
            .nccl_release.empty());
  const std::string path = (std::filesystem::temp_directory_path() / "treering-nccl-library.log").string();
  {
    std::ofstream out(path);
    out << "# nccl-tests version 2.17.6 nccl-headers=21605 nccl-library=21605\n# ranks: 2\n# op: sendrecv\n"
           "        1024           256     float     none      -1    31.20    0.03    0.03      0    31.00    0.03    "
           "0.03      0\n";
  }
  CHECK(validate::read_collective_measurements(path).front().nccl_release == "2.16.5");
  std::filesystem::remove(path);
}

TEST_CASE("a release named in passing is not the one that ran; NCCL's own INFO lines are read for it, not as rows") {
  const std::string path = (std::filesystem::temp_directory_path() / "treering-nccl-info.log").string();
  const std::string row =
      "        1024           256     float     none      -1    31.20    0.03    0.03      0    31.00    0.03    0.03  "
      "    0\n";
  {
    std::ofstream out(path);
    out << "# NCCL version: not shown; the cluster was said to run NCCL version 2.21.5\n# ranks: 2\n# op: sendrecv\n"
        << row;
  }
  CHECK(validate::read_collective_measurements(path).front().nccl_release.empty());
  {
    std::ofstream out(path);
    out << "# ranks: 2\n# op: sendrecv\nnode1:4242:4242 [0] NCCL INFO Bootstrap : Using eth0\n"
           "node1:4242:4242 [0] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
        << row;
  }
  const auto rows = validate::read_collective_measurements(path);
  CHECK(rows.size() == 1);
  CHECK(rows.front().nccl_release == "2.26.2");
  {
    std::ofstream out(path);
    out << "# NCCL version 2.99999999999.1\n# ranks: 2\n# op: sendrecv\n" << row;  // no such release: not read
  }
  CHECK(validate::read_collective_measurements(path).front().nccl_release.empty());
  std::filesystem::remove(path);
}
