// What-if: --set on any command with a cluster, `treering sensitivity`, and calibrate keeping --nodes.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("--set: the ring across 2 DGX H100 with 800 Gb/s NICs moves its blocks twice as fast") {
  // 16 GPUs, 1M tokens: 15 rounds each sending 62,500 tokens x 8 KiB = 512 MB through a NIC, transfer-bound
  // (the attention takes ~0.2 ms a block). At 400 Gb/s (50 GB/s x 0.92 = 46 GB/s) a round's transfer takes
  // 11.1 ms, at 800 Gb/s 5.57 ms: the network part of the latency halves exactly.
  const std::string base = "predict --cluster dgx-h100 --nodes 2 --seq-len 1M --algo ring --format json";
  const auto normal = nlohmann::json::parse(run_treering(base).out);
  const auto faster = nlohmann::json::parse(run_treering(base + " --set nics.bandwidth=800Gb/s").out);
  const double inter = normal[0]["breakdown"]["inter_node_s"].get<double>();
  const double inter_faster = faster[0]["breakdown"]["inter_node_s"].get<double>();
  CHECK(inter > 0);
  // Each round's exposed transfer is (latency + S / B) - attention: halving S / B takes away half of S / B.
  const double transfer_s = 512e6 / 46e9;  // per round
  CHECK(inter - inter_faster == doctest::Approx(15 * transfer_s / 2).scale(1e-12).epsilon(0.01));
}

TEST_CASE("--set errors: a path that names nothing, a value the file cannot hold") {
  const auto missing = run_treering("predict --cluster dgx-h100 --seq-len 1M --set nic.bw=3");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("has no value at 'nic.bw'") != std::string::npos);
  const auto bad = run_treering("predict --cluster dgx-h100 --seq-len 1M --set nics.bandwidth=fast");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("preset:dgx-h100:") != std::string::npos);
}

TEST_CASE("sensitivity: the ring across nodes is bound by NIC bandwidth, tree not at all") {
  const auto result =
      run_treering("sensitivity --cluster dgx-h100 --nodes 16 --seq-len 1M --algo ring,tree --format json");
  REQUIRE(result.exit_code == 0);
  const auto json = nlohmann::json::parse(result.out);
  double ring_nic = 0, tree_nic = 1, tree_hbm = 0;
  for (const auto& p : json["parameters"]) {
    if (p["path"] == "nics.bandwidth") {
      ring_nic = p["elasticity"]["ring"].get<double>();
      tree_nic = p["elasticity"]["tree"].get<double>();
    }
    if (p["path"] == "hbm_bandwidth") tree_hbm = p["elasticity"]["tree"].get<double>();
  }
  // The ring's 127 rounds each wait for a 64 MB block through a 46 GB/s NIC (1.4 ms) against 0.03 ms of
  // attention: latency ~ S / B, elasticity close to -1. Tree sends 8 kB: its NICs do not matter; its
  // attention over 7,813 tokens reads HBM, a part of its latency: elasticity between -1 and 0.
  CHECK(ring_nic < -0.95);
  CHECK(ring_nic > -1.0001);
  CHECK(std::abs(tree_nic) < 0.01);
  CHECK(tree_hbm < -0.01);
  CHECK(tree_hbm > -1);
}

TEST_CASE("calibrate --nodes 2 writes a file of 2 nodes") {
  const std::string out = std::string(TREERING_BINARY_DIR) + "/tests/whatif-cal.yaml";
  const auto result = run_treering(
      "calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100 --nodes 2 -o " + out);
  REQUIRE(result.exit_code == 0);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("    count: 2 ") != std::string::npos);
  const auto show = run_treering("topo show " + out + " --format json");
  REQUIRE(show.exit_code == 0);
  CHECK(nlohmann::json::parse(show.out)["gpus"] == 16);
}

TEST_CASE("tune on 16 DGX H100 at 1M tokens: a best strategy never slower than tree") {
  const auto result =
      run_treering("tune --cluster dgx-h100 --nodes 16 --workload paper-mha16 --seq-len 1M --format json");
  REQUIRE(result.exit_code == 0);
  const auto json = nlohmann::json::parse(result.out);
  CHECK(json["best_latency_s"].get<double>() <= json["tree_latency_s"].get<double>());
  CHECK(json["best_latency_s"].get<double>() <= json["ring_latency_s"].get<double>());
  CHECK(json["strategies"][0]["strategy"] == json["best"]);
  CHECK(json["strategies"][0].contains("simulated_latency_s"));
  const auto table = run_treering("tune --cluster dgx-h100 --nodes 16 --workload paper-mha16 --seq-len 1M");
  CHECK(table.out.find("best: ") != std::string::npos);
}

TEST_CASE("simulate what-ifs: a slow NIC hurts the ring, a straggler the tree; bad options are errors") {
  // 4 DGX H100 nodes, 1M tokens. GPU 0's NIC at a quarter: the ring's blocks through it take 4x as long, and
  // the ring is transfer-bound (its latency ~ the slowest edge's): more than 3x slower. tree sends ~8 kB: its
  // NICs hardly matter (under 1 %).
  const auto nic = run_treering(
      "simulate --cluster dgx-h100 --nodes 4 --seq-len 1M --algo ring,tree --slow-nic 0:0.25 --format json");
  REQUIRE(nic.exit_code == 0);
  const auto rows = nlohmann::json::parse(nic.out);
  CHECK(rows[0]["latency_s"].get<double>() / rows[0]["healthy_latency_s"].get<double>() > 3);
  CHECK(rows[1]["latency_s"].get<double>() / rows[1]["healthy_latency_s"].get<double>() < 1.01);
  // GPU 3 at half speed: tree's attention (31,250 tokens a GPU) is on its critical path, the ring's is not
  // (hidden behind 30x longer transfers).
  const auto slow = nlohmann::json::parse(
      run_treering("simulate --cluster dgx-h100 --nodes 4 --seq-len 1M --algo ring,tree --slow-gpu 3:2 --format json")
          .out);
  CHECK(slow[0]["latency_s"].get<double>() / slow[0]["healthy_latency_s"].get<double>() < 1.01);
  CHECK(slow[1]["latency_s"].get<double>() / slow[1]["healthy_latency_s"].get<double>() > 1.2);
  CHECK(run_treering("simulate --cluster dgx-h100 --seq-len 1M --slow-gpu 3").exit_code == 2);
  CHECK(run_treering("simulate --cluster dgx-h100 --seq-len 1M --slow-gpu 3:0.5").exit_code == 2);
  CHECK(run_treering("simulate --cluster dgx-h100 --seq-len 1M --link-down spine0,nowhere").exit_code == 2);
}

TEST_CASE("--split by-speed on mixed H100 + H200: tree gains, the ring loses") {
  // model/tests/test_split.cpp derives both: tree's attention goes from the H100s' 23.9 us to the balanced 19.6 us
  // (+ launch) at 1M tokens; the ring's largest block grows from 7,813 to 9,202 tokens.
  const std::string base =
      "predict --cluster topologies/examples/mixed-h100-h200.yaml --seq-len 1M --algo tree,ring --format json";
  const auto equal = nlohmann::json::parse(run_treering(base).out);
  const auto balanced = nlohmann::json::parse(run_treering(base + " --split by-speed").out);
  const double tree_gain_s = equal[0]["latency_s"].get<double>() - balanced[0]["latency_s"].get<double>();
  CHECK(tree_gain_s == doctest::Approx(7813 * 8192.0 / (0.8 * 3.35e12) - 1e6 * 8192.0 / (64 * 0.8 * 8.15e12))
                           .scale(1e-12)
                           .epsilon(0.02));
  CHECK(balanced[1]["latency_s"].get<double>() / equal[1]["latency_s"].get<double>() ==
        doctest::Approx(9202.0 / 7813).scale(1e-12).epsilon(0.01));
  CHECK(run_treering(base + " --split fastest").exit_code == 2);
}

TEST_CASE("tune and sensitivity answer for the split they are given") {
  // The paper's tree in tune's search is the tree predict gives for the same split (by-speed gains ~4 us on the
  // mixed cluster: see the case above), not the equal split's.
  const std::string cluster = "--cluster topologies/examples/mixed-h100-h200.yaml --seq-len 1M";
  const auto predicted =
      nlohmann::json::parse(run_treering("predict " + cluster + " --algo tree --split by-speed --format json").out);
  const auto equal = nlohmann::json::parse(run_treering("predict " + cluster + " --algo tree --format json").out);
  const auto tuned =
      nlohmann::json::parse(run_treering("tune " + cluster + " --split by-speed --confirm 1 --format json").out);
  CHECK(tuned["tree_latency_s"].get<double>() ==
        doctest::Approx(predicted[0]["latency_s"].get<double>()).scale(1e-12).epsilon(1e-12));
  CHECK(tuned["tree_latency_s"].get<double>() < equal[0]["latency_s"].get<double>());
  const auto sensitivity = nlohmann::json::parse(
      run_treering("sensitivity " + cluster + " --algo tree --split by-speed --param nics.bandwidth --format json")
          .out);
  CHECK(sensitivity["latency_s"]["tree"].get<double>() ==
        doctest::Approx(predicted[0]["latency_s"].get<double>()).scale(1e-12).epsilon(1e-12));
}
