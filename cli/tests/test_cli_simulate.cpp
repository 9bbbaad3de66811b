// `treering simulate` and `treering compare`.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("simulate --format json: the simulated latency beside the model's, bytes and utilisation per link") {
  auto result = run_treering("simulate --cluster dgx-h100 --nodes 1 --seq-len 64k --algo ring --format json");
  REQUIRE(result.exit_code == 0);
  auto row = nlohmann::json::parse(result.out)[0];
  // One node: no link shared, the replay equals the model.
  CHECK(row["latency_s"].get<double>() ==
        doctest::Approx(row["model_latency_s"].get<double>()).scale(1e-12).epsilon(1e-9));
  // 8 GPUs, each sending 7 blocks of 8,000 tokens x 8 KiB through its NVSwitch port: 16 directed links used.
  REQUIRE(row["links"].size() == 16);
  CHECK(row["links"][0]["bytes"].get<double>() == 7 * 8000 * 8192.0);
  CHECK(row["links"][0]["utilisation"].get<double>() > 0);
  CHECK(row["links"][0]["utilisation"].get<double>() <= 1.0);
}

TEST_CASE("compare prints both and their difference, for every algorithm") {
  auto table = run_treering("compare --cluster rtx4090-pcie --nodes 1 --seq-len 80k --algo ring");
  CHECK(table.exit_code == 0);
  // The shared PCIe uplinks (sim/tests/test_replay.cpp): each of the ring's 7 rounds moves a block of 10,000 tokens
  // x 8 KiB at 31.5 GB/s x 0.80 / 4 = 6.3 GB/s (four ring edges on each switch uplink) where the model has it alone
  // at 25.2 GB/s; everything else is the same in both. Simulated = model + 7 x block x (1 / 6.3 - 1 / 25.2) / 1e9.
  const auto predicted = nlohmann::json::parse(
      run_treering("predict --cluster rtx4090-pcie --nodes 1 --seq-len 80k --algo ring --format json").out);
  const double model_s = predicted[0]["latency_s"].get<double>();
  const double block_bytes = 10000 * 8192.0;
  const double simulated_s = model_s + 7 * block_bytes * (1 / 6.3e9 - 1 / 25.2e9);
  char difference[32];
  std::snprintf(difference, sizeof difference, "%+.2f %%", 100 * (simulated_s / model_s - 1));  // +297.30 %
  CHECK(table.out.find(difference) != std::string::npos);
  auto all = run_treering("compare --cluster dgx-h100 --nodes 1 --seq-len 80k");
  CHECK(all.exit_code == 0);
  for (const char* algorithm : {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}) {
    CHECK(all.out.find(algorithm) != std::string::npos);
  }
}

TEST_CASE("simulate speaks predict's schema: the same keys, the engine named, CSV too") {
  const std::string flags =
      " --cluster dgx-h100 --nodes 2 --seq-len 256k --algo tree,ring --batch 2 --tokens 8 --prefill";
  auto simulated = run_treering("simulate" + flags + " --format json");
  auto predicted = run_treering("predict" + flags + " --format json");
  REQUIRE(simulated.exit_code == 0);
  REQUIRE(predicted.exit_code == 0);
  const auto sim_rows = nlohmann::json::parse(simulated.out);
  const auto model_rows = nlohmann::json::parse(predicted.out);
  REQUIRE(sim_rows.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    for (const auto& [key, value] : model_rows[i].items()) {
      CAPTURE(key);
      CHECK(sim_rows[i].contains(key));
    }
    CHECK(sim_rows[i]["engine"] == "sim");
    CHECK(model_rows[i]["engine"] == "model");
    CHECK(sim_rows[i]["batch"] == 2);
    CHECK(sim_rows[i]["volume_bytes"] == model_rows[i]["volume_bytes"]);  // the same plan
    // token time = 1 layer x latency (paper-mha16 has no weights): generation of 8 tokens > 8 x the first token.
    CHECK(sim_rows[i]["generation_s"].get<double>() >= 8 * sim_rows[i]["token_s"].get<double>());
    CHECK(sim_rows[i]["model_latency_s"] == model_rows[i]["latency_s"]);
    CHECK(sim_rows[i]["transfers_simulated"].get<long long>() > 0);
  }
  // An implementation's own prefill (paper-torch-llama: the paper's causal ring) is the same in both engines: the
  // simulator replays the decode steps only.
  const std::string paper =
      " --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 20k --algo tree --tokens 2 "
      "--prefill --impl paper-torch-llama --format json";
  auto sim_paper = run_treering("simulate" + paper);
  auto model_paper = run_treering("predict" + paper);
  REQUIRE(sim_paper.exit_code == 0);
  REQUIRE(model_paper.exit_code == 0);
  const double prefill_s = nlohmann::json::parse(model_paper.out)[0]["prefill_s"].get<double>();
  CHECK(nlohmann::json::parse(sim_paper.out)[0]["prefill_s"].get<double>() == prefill_s);
  auto generic = run_treering(
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 20k --algo tree "
      "--tokens 2 --prefill --format json");
  REQUIRE(generic.exit_code == 0);
  CHECK(nlohmann::json::parse(generic.out)[0]["prefill_s"].get<double>() < prefill_s);  // the balanced estimate
  auto csv = run_treering("simulate --cluster dgx-h100 --nodes 1 --seq-len 80k --algo tree --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("algo,engine,cluster,nodes,gpus,workload,batch,seq_len,latency_s,", 0) == 0);
  CHECK(csv.out.find("\ntree,sim,dgx-h100,1,8,paper-mha16,1,80000,") != std::string::npos);
}

TEST_CASE("simulate --trace writes a trace a person can open") {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/cli-output/trace-test.json";
  auto result = run_treering("simulate --cluster dgx-h100 --nodes 2 --seq-len 1M --algo tree-lse --trace " + path);
  REQUIRE(result.exit_code == 0);
  std::ifstream in(path);
  auto trace = nlohmann::json::parse(in);
  CHECK(trace["traceEvents"].size() > 16);  // 16 GPU tracks and their spans
  CHECK(run_treering("simulate --cluster dgx-h100 --seq-len 1M,2M --algo ring --trace " + path).exit_code == 2);
}

TEST_CASE("simulate --simgrid: SimGrid's network replay the same plans to the same figures, and the table says which") {
  const std::string args =
      "simulate --cluster rtx4090-pcie --nodes 2 --seq-len 160007 --algo ring,tree,tree-lse,pass-q";
  auto ours = run_treering(args + " --format json");
  auto simgrid = run_treering(args + " --simgrid --format json");
  REQUIRE(ours.exit_code == 0);
  REQUIRE(simgrid.exit_code == 0);
  const auto a = nlohmann::json::parse(ours.out), b = nlohmann::json::parse(simgrid.out);
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i]["algo"]);
    CHECK(a[i]["simulator"] == "event loop");
    CHECK(b[i]["simulator"].get<std::string>().rfind("SimGrid 3.", 0) == 0);
    CHECK(a[i]["latency_s"].get<double>() ==
          doctest::Approx(b[i]["latency_s"].get<double>()).scale(1e-12).epsilon(1e-9));
  }
  CHECK(run_treering(args).out.find("simulator (event loop, links shared max-min)") != std::string::npos);
  CHECK(run_treering(args + " --simgrid").out.find("simulator (SimGrid 3.") != std::string::npos);
  // Equal blocks (16 x 10,000 tokens): the ring's repeated rounds skipped, in either engine.
  const std::string even = args.substr(0, args.find("--seq-len")) + "--seq-len 160000 --algo ring --format json";
  CHECK(nlohmann::json::parse(run_treering(even).out)[0]["latency_s"].get<double>() ==
        doctest::Approx(nlohmann::json::parse(run_treering(even + " --simgrid").out)[0]["latency_s"].get<double>())
            .scale(1e-12)
            .epsilon(1e-9));
}

TEST_CASE("compare refuses what it would ignore; simulate --tokens shows the generation it computes") {
  for (const char* extra : {"--scope step", "--tokens 10", "--prefill"}) {
    CAPTURE(extra);
    auto refused = run_treering(std::string("compare --cluster dgx-h100 --nodes 1 --seq-len 80k ") + extra);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("not expected") != std::string::npos);
  }
  auto table = run_treering("simulate --cluster dgx-h100 --nodes 1 --seq-len 80k --algo tree --tokens 10 --prefill");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("generation") != std::string::npos);
}

namespace {

// dgx-h100 with one NIC a node, shared by its 8 GPUs.
std::string one_nic() {
  std::string flags = " --set nics.count=1";
  for (int gpu = 1; gpu < 8; ++gpu) flags += " --set nics.gpu_to_nic." + std::to_string(gpu) + "=0";
  return flags;
}

double latency_of(const std::string& command) {
  const auto result = run_treering(command + " --format json");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  return nlohmann::json::parse(result.out)[0]["latency_s"].get<double>();
}

}  // namespace

TEST_CASE("simulate and predict: eight CP rings that share one NIC a node take about 8x as long as on 8 NICs") {
  // tp 8 x cp 4 on 4 DGX H100, 1M tokens: each ring round moves a block of 250,000 tokens x 1 KiB = 256 MB over
  // the network edge; with its own NIC 256 MB / 46 GB/s = 5.57 ms, with one NIC for the 8 rings 44.5 ms. The 3
  // rounds are transfer-bound (the attention is ~130 us), so the whole ring takes about 8x as long.
  const std::string layout = " --nodes 4 --workload paper-mha16 --tp 8 --cp 4 --algo ring --seq-len 1M";
  for (const char* command : {"simulate", "predict"}) {
    CAPTURE(command);
    const double eight_s = latency_of(std::string(command) + " --cluster dgx-h100" + layout);
    const double one_s = latency_of(std::string(command) + " --cluster dgx-h100" + one_nic() + layout);
    CHECK(one_s / eight_s > 7.5);
    CHECK(one_s / eight_s < 8.0);
  }
  const auto table = run_treering("simulate --cluster dgx-h100" + one_nic() + layout);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("32 GPUs, 8 groups at once") != std::string::npos);  // what the row uses, not one group's 4
  CHECK(table.out.find("busiest links") != std::string::npos);
  CHECK(table.out.find("dgx-h100-0/nic0 -> ") != std::string::npos);  // the shared NIC, the busiest
}

TEST_CASE("simulate --format json: the groups and GPUs replayed, the shortcuts taken, the busiest links") {
  const auto json = nlohmann::json::parse(
      run_treering("simulate --cluster dgx-h100 --nodes 2 --tp 8 --cp 2 --algo ring --seq-len 1M --format json")
          .out)[0];
  CHECK(json["groups"] == 8);
  CHECK(json["groups_replayed"] == 1);  // rail-optimised: the groups share no link, one stands for all
  CHECK(json["gpus_replayed"] == 16);
  CHECK(json["gpus"] == 16);
  REQUIRE(json["shortcuts"].size() == 1);
  CHECK(json["busiest_links"].size() == 5);
  const auto every = nlohmann::json::parse(
      run_treering(
          "simulate --cluster dgx-h100 --nodes 2 --tp 8 --cp 2 --algo ring --seq-len 1M --every-group --format json")
          .out)[0];
  CHECK(every["groups_replayed"] == 8);
  CHECK(every["latency_s"].get<double>() ==
        doctest::Approx(json["latency_s"].get<double>()).scale(1e-12).epsilon(1e-12));
  // Replicas: tp 8 x cp 2 copied over 8 nodes: 4 replicas, 32 CP groups, 64 GPUs.
  const auto replicas = nlohmann::json::parse(
      run_treering(
          "simulate --cluster dgx-h100 --nodes 8 --tp 8 --cp 2 --replicas all --algo tree --seq-len 1M --format json")
          .out)[0];
  CHECK(replicas["replicas"] == 4);
  CHECK(replicas["gpus"] == 64);
  CHECK(replicas["groups"] == 32);
  CHECK(run_treering("predict --cluster dgx-h100 --nodes 4 --tp 8 --cp 2 --replicas 2 --seq-len 1M").exit_code == 0);
  const auto too_many = run_treering("predict --cluster dgx-h100 --nodes 2 --tp 8 --cp 2 --replicas 3 --seq-len 1M");
  CHECK(too_many.exit_code == 2);
  CHECK(too_many.err.find("48 GPUs") != std::string::npos);
  CHECK(run_treering("predict --cluster dgx-h100 --nodes 2 --replicas zero --seq-len 1M").exit_code == 2);
}
