// `treering topo ...` end to end: exit codes and the figures a person reads, derived by hand.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("topo list names every preset") {
  auto result = run_treering("topo list");
  CHECK(result.exit_code == 0);
  for (const char* name : {"dgx-h100", "dgx-h200", "dgx-a100", "mi300x", "rtx4090-pcie", "gb200-nvl72"}) {
    CHECK_MESSAGE(result.out.find(name) != std::string::npos, name);
  }
  CHECK(result.err.empty());
}

TEST_CASE("topo show dgx-h100 --nodes 16 prints the cluster's shape") {
  auto result = run_treering("topo show dgx-h100 --nodes 16");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("GPUs:             128") != std::string::npos);  // 16 x 8
  CHECK(result.out.find("nodes:            16") != std::string::npos);
  CHECK(result.out.find("3.2 TB/s per direction") != std::string::npos);  // 8 nodes x 8 x 50 GB/s
  CHECK(result.out.find("450 GB/s") != std::string::npos);                // NVLink 4 per GPU
}

TEST_CASE("topo show --format json has gpus, nodes and gpus_per_node") {
  auto result = run_treering("topo show dgx-h100 --nodes 2 --format json");
  REQUIRE(result.exit_code == 0);
  auto json = nlohmann::json::parse(result.out);
  CHECK(json["gpus"] == 16);
  CHECK(json["nodes"] == 2);
  CHECK(json["gpus_per_node"] == 8);
  // GPU 0 -> GPU 8 (node 1, rail 0): GPU > NIC > rail-0 leaf > NIC > GPU = 4 links, 1 + 0.13 + 1 us.
  CHECK(json["routes"]["scale_out"]["hops"] == 4);
  CHECK(json["routes"]["scale_out"]["latency_s"].get<double>() == doctest::Approx(2.13e-6).scale(1e-12));
  CHECK(json["routes"]["scale_out"]["bottleneck_Bps"].get<double>() == doctest::Approx(50e9).scale(1e-12));
}

TEST_CASE("topo check: 0 when all are valid, 2 with every error printed otherwise") {
  auto good = run_treering("topo check topologies/clusters/dgx-h100.yaml topologies/clusters/mi300x.yaml");
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("topologies/clusters/mi300x.yaml: ok (128 GPUs in 16 nodes)") != std::string::npos);
  auto bad = run_treering(
      "topo check topologies/tests/bad/unknown-key-gpu.yaml topologies/clusters/dgx-h100.yaml "
      "topologies/tests/bad/missing-name.yaml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("topologies/tests/bad/unknown-key-gpu.yaml:") == 0);
  CHECK(bad.err.find("topologies/tests/bad/missing-name.yaml:") != std::string::npos);
  CHECK(bad.out.find("dgx-h100.yaml: ok") != std::string::npos);
}

TEST_CASE("topo dot writes Graphviz") {
  auto result = run_treering("topo dot rtx4090-pcie --nodes 1");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("graph \"rtx4090-pcie\" {") != std::string::npos);
  CHECK(result.out.find("subgraph cluster_node0") != std::string::npos);
}

TEST_CASE("--gpus-per-node on a preset with a NIC map runs on the first GPUs of each node") {
  // mi300x maps GPU g to NIC g; 4 GPUs per node on 2 nodes is 8 GPUs, GPU 4 the first of node 1.
  auto result =
      run_treering("predict --cluster mi300x --nodes 2 --gpus-per-node 4 --seq-len 80k --algo tree --format json");
  REQUIRE(result.exit_code == 0);
  const auto rows = nlohmann::json::parse(result.out);
  CHECK(rows[0]["gpus"] == 8);
  CHECK(rows[0]["nodes"] == 2);
}

TEST_CASE("topo list: a description that starts with a digit is text, left-aligned; one node is 'node'") {
  auto list = run_treering("topo list");
  REQUIRE(list.exit_code == 0);
  auto column_of = [&](const std::string& preset, const std::string& description) {
    const size_t line = list.out.find("\n" + preset + " ");
    REQUIRE(line != std::string::npos);
    return list.out.find(description, line) - (line + 1);
  };
  CHECK(column_of("mi300x", "8x AMD MI300X") == column_of("dgx-h100", "DGX H100"));  // was right-aligned
  auto predict = run_treering("predict --cluster dgx-h100 --nodes 1 --seq-len 80k --algo tree");
  REQUIRE(predict.exit_code == 0);
  CHECK(predict.out.find("1 node, ") != std::string::npos);
  CHECK(predict.out.find("1 nodes") == std::string::npos);
}
