// `treering collective`: the example and its errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("collective --op allreduce --bytes 8K on 2 DGX H100") {
  auto result = run_treering("collective --op allreduce --bytes 8K --cluster dgx-h100 --nodes 2 --format json");
  REQUIRE(result.exit_code == 0);
  const auto list = nlohmann::json::parse(result.out);
  REQUIRE(list.is_array());  // one size or several: always an array
  REQUIRE(list.size() == 1);
  const auto& json = list[0];
  // Tree/LL: 6.8 + 2 x (7 x 0.6 + 5.0) = 25.2 us, plus 2 x 8192 B at LL's bus cap across 2 nodes (39 GB/s over
  // 16 channels) on the 2 channels NCCL keeps for 8 KiB (8192 >= 2 x 512 threads x 8 B), times NCCL's tree
  // correction at 8 KiB = 64 B x 2^7 (0.7): 2 x 8192 / (39e9 x 2/16 x 0.7) = 4.8 us.
  CHECK(json["time_s"].get<double>() == doctest::Approx(25.2e-6 + 2 * 8192 / (39e9 * 2 / 16 * 0.7)).scale(1e-12));
  CHECK(json["algorithm"] == "tree");
  CHECK(json["protocol"] == "LL");
  CHECK(json["breakdown"]["latency_s"].get<double>() == doctest::Approx(25.2e-6).scale(1e-12));
  CHECK(json["gpus"] == 16);
}

TEST_CASE("collective over a range prints one row per size") {
  auto result = run_treering("collective --bytes 8:1G:x8 --cluster dgx-h100 --nodes 2");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("1073741824") != std::string::npos);
  CHECK(result.out.find("nvls-tree") != std::string::npos);
  auto json = run_treering("collective --bytes 8,1G --cluster dgx-h100 --nodes 2 --format json");
  CHECK(nlohmann::json::parse(json.out).size() == 2);
}

TEST_CASE("collective: bad requests exit 2 with a reason") {
  auto op = run_treering("collective --op allsum --bytes 8 --cluster dgx-h100");
  CHECK(op.exit_code == 2);
  CHECK(op.err.rfind("error: unknown collective operation 'allsum'", 0) == 0);
  auto size = run_treering("collective --bytes 8Q --cluster dgx-h100");
  CHECK(size.exit_code == 2);
  auto nvls = run_treering("collective --bytes 8 --algo nvls --cluster dgx-h100 --nodes 2");
  CHECK(nvls.exit_code == 2);
  CHECK(
      nvls.err ==
      "error: no nvls allreduce can run on this group of GPUs (needs in-switch reduction; across nodes also the "
      "network's in_network_reduction: true (SHARP), 2 or more nodes, Simple, all-reduce and 2 or more GPUs a node)\n");
  auto gpus = run_treering("collective --op sendrecv --bytes 8 --gpus 0,1,2 --cluster dgx-h100");
  CHECK(gpus.exit_code == 2);
  CHECK(run_treering("collective --bytes 8").exit_code == 2);  // no --cluster
}

TEST_CASE("collective: each prediction carries its band") {
  // Uncalibrated, the band is the collective model's worst error on the public 2-node H100 set, e = 0.23 (the
  // efficient profile's communication uncertainty): [t / 1.23, t / 0.77]. Inside one node, 1 MiB:
  const auto list =
      nlohmann::json::parse(run_treering("collective --bytes 1M --cluster dgx-h100 --nodes 1 --format json").out);
  const auto& json = list.at(0);
  const double time_s = json["time_s"].get<double>();
  CHECK(json["time_s_low"].get<double>() == doctest::Approx(time_s / 1.23).scale(1e-12));
  CHECK(json["time_s_high"].get<double>() == doctest::Approx(time_s / 0.77).scale(1e-12));
  auto table = run_treering("collective --bytes 1M --cluster dgx-h100 --nodes 1");
  CHECK(table.out.find("band: +-23.0 %") != std::string::npos);
  // Across 2 nodes at 8 B (tree/LL: 25.2 us of latency, ns of transfer), latency-bound: the network_latency
  // error, 0.46: [t / 1.46, t / 0.54]; at 1 GiB (NVLS-tree, bandwidth-bound) 0.23 again.
  const auto across =
      nlohmann::json::parse(run_treering("collective --bytes 8,1G --cluster dgx-h100 --nodes 2 --format json").out);
  CHECK(across.at(0)["time_s_high"].get<double>() ==
        doctest::Approx(across.at(0)["time_s"].get<double>() / 0.54).scale(1e-12));
  CHECK(across.at(1)["time_s_high"].get<double>() ==
        doctest::Approx(across.at(1)["time_s"].get<double>() / 0.77).scale(1e-12));
  auto both = run_treering("collective --bytes 8,1G --cluster dgx-h100 --nodes 2");
  CHECK(both.out.find("band (8 B): +-46.0 %") != std::string::npos);
  CHECK(both.out.find(": +-23.0 %") != std::string::npos);
}

TEST_CASE("collective --op alltoall: NCCL's grouped send/recv over 2 DGX H100") {
  // 16 KiB per rank, 1 KiB per peer: 8.4 + 14 + 5.0 + 8 network peers x 3 = 51.4 us (model/tests/test_alltoall.cpp),
  // plus 8 KiB through the NIC at 46 GB/s.
  auto result = run_treering("collective --op alltoall --bytes 16K --cluster dgx-h100 --nodes 2 --format json");
  REQUIRE(result.exit_code == 0);
  const auto json = nlohmann::json::parse(result.out).at(0);
  CHECK(json["time_s"].get<double>() == doctest::Approx(51.4e-6 + 8192 / 46e9).scale(1e-12));
  CHECK(json["algorithm"] == "p2p");
  CHECK(json["protocol"] == "Simple");
}

TEST_CASE(
    "collective --engine sim: an all-to-all across a 3:1 spine takes longer than across 1:1; the model's pick "
    "replayed") {
  const std::string fat_tree = std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml";
  auto simulated_s = [&](const char* ratio) {
    const auto result = run_treering("collective --cluster " + fat_tree + " --set network.oversubscription=" + ratio +
                                     " --nodes 16 --op alltoall --bytes 256M --engine sim --format json");
    REQUIRE_MESSAGE(result.exit_code == 0, result.err);
    const auto row = nlohmann::json::parse(result.out)[0];
    CHECK(row["simulator"] == "event loop");
    CHECK(row["simulated_flows"] == 128 * 127);  // every rank to every other
    return row["simulated_time_s"].get<double>();
  };
  CHECK(simulated_s("3") > 1.5 * simulated_s("1"));
  const auto table =
      run_treering("collective --cluster dgx-h100 --nodes 2 --op allreduce --bytes 1M,1G --engine model,sim");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("simulated") != std::string::npos);
  CHECK(run_treering("collective --cluster dgx-h100 --nodes 2 --op allreduce --bytes 1M --engine packets").exit_code ==
        2);
}
