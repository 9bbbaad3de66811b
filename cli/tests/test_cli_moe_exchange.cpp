// `treering collective --op moe-dispatch|moe-combine`: the example on 1, 2, 4 and 8 H800 nodes, model
// and sim, and its errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("collective --op moe-dispatch --workload deepseek-v3 --batch 128 --ep-kernel low-latency, 1-8 nodes") {
  for (int nodes : {1, 2, 4, 8}) {
    CAPTURE(nodes);
    auto result = run_treering(
        "collective --op moe-dispatch --workload deepseek-v3 --batch 128 --ep-kernel low-latency "
        "--cluster dgx-h800 --engine model,sim --format json --nodes " +
        std::to_string(nodes));
    REQUIRE(result.exit_code == 0);
    const auto json = nlohmann::json::parse(result.out).at(0);
    CHECK(json["ep"] == 8 * nodes);
    // every copy through the NIC: 128 tokens x 8 experts x (7,168 + 56 x 4 + 16) B, nothing over NVLink
    CHECK(json["nic_bytes_per_gpu"].get<double>() == doctest::Approx(128 * 8 * 7408.0).scale(1e-12));
    CHECK(json["nvlink_bytes_per_gpu"].get<double>() == 0);
    // at least that over one 400 Gb/s NIC at 0.92 (46 GB/s), and alone on its routes the replay agrees
    CHECK(json["time_s"].get<double>() > 128 * 8 * 7408.0 / 46e9);
    CHECK(json["simulated_time_s"].get<double>() ==
          doctest::Approx(json["time_s"].get<double>()).epsilon(1e-6).scale(1e-12));
    CHECK(json["nodes_per_token"].get<double>() <= 4.0);  // group-limited: at most 4 of the 8 groups
    CHECK(json["time_s_low"].get<double>() < json["time_s"].get<double>());
  }
}

TEST_CASE("collective --op moe-combine prints a row per batch with the kernel and the routing") {
  auto result = run_treering(
      "collective --op moe-combine --workload deepseek-v3 --batch 1,128 --ep-kernel normal --cluster dgx-h800 --nodes "
      "2");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("moe-combine of deepseek-v3 over 16 GPUs (EP 16)") != std::string::npos);
  CHECK(result.out.find("NVLink forwarding") != std::string::npos);
  CHECK(result.out.find("group-limited") != std::string::npos);
  CHECK(result.out.find("\n128 ") != std::string::npos);
}

TEST_CASE("collective moe-*: bad requests exit 2 with a reason") {
  const struct {
    const char* arguments;
    const char* reason;
  } cases[] = {
      {"--op moe-dispatch", "needs --workload"},
      {"--op moe-dispatch --workload llama3.1-8b", "has no routed experts"},
      {"--op moe-dispatch --workload deepseek-v3 --bytes 1M", "not --bytes"},
      {"--op moe-dispatch --workload deepseek-v3 --ep-kernel fast", "unknown EP kernel 'fast'"},
      {"--op moe-dispatch --workload deepseek-v3 --gpus 0,1,2", "do not split evenly over EP 3"},
      {"--op moe-dispatch --workload deepseek-v3 --expert-skew 0.5", "--expert-skew must be at least 1"},
      {"--op moe-dispatch --workload deepseek-v3 --dtype fp4", "unknown MoE exchange dtype"},
      {"--op moe-dispatch --workload deepseek-v3 --simgrid --engine sim", "event loop only"},
      {"--op allreduce", "--bytes is required"},
      {"--op allreduce --bytes 1M --ep-kernel nccl", "are for --op moe-dispatch"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.arguments);
    auto result = run_treering(std::string("collective --cluster dgx-h800 --nodes 2 ") + c.arguments);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(c.reason) != std::string::npos);
  }
}

TEST_CASE("predict --workload deepseek-v3 --ep 64 --dp-attention --scope step --nodes 8") {
  auto result = run_treering(
      "predict --cluster dgx-h800 --nodes 8 --workload deepseek-v3 --ep 64 --dp-attention --scope step --seq-len 4k "
      "--batch 2048 --algo tree --format json");
  REQUIRE(result.exit_code == 0);
  const auto row = nlohmann::json::parse(result.out).at(0);
  CHECK(row["ep"] == 64);
  CHECK(row["tp"] == 64);
  CHECK(row["attention_parallelism"] == "dp-attention");
  const auto& experts = row["step"]["experts"];
  CHECK(experts["tokens_per_gpu"] == 32);  // 2,048 sequences over 64 GPUs, each its own
  CHECK(experts["moe_layers"] == 58);
  CHECK(experts["dispatch"]["kernel"] == "low-latency");
  CHECK(experts["dispatch"]["ep"] == 64);
  // 58 MoE layers' dispatch and combine
  CHECK(row["step"]["breakdown"]["ep_communication_s"].get<double>() ==
        doctest::Approx(58 * experts["exchange_s"].get<double>()).scale(1e-12));
  CHECK(row["tokens_per_s_per_gpu"].get<double>() ==
        doctest::Approx(2048 / row["step_s"].get<double>() / 64).scale(1e-12));
  auto table = run_treering(
      "predict --cluster dgx-h800 --nodes 8 --workload deepseek-v3 --ep 64 --dp-attention --scope step --seq-len 4k "
      "--batch 2048 --algo tree");
  CHECK(table.out.find("experts: EP 64 over 8 node(s), low-latency kernel") != std::string::npos);
  auto simulated = run_treering(
      "simulate --cluster dgx-h800 --nodes 8 --workload deepseek-v3 --ep 64 --dp-attention --scope step --seq-len 4k "
      "--batch 2048 --algo tree --format json");
  REQUIRE(simulated.exit_code == 0);
  CHECK(nlohmann::json::parse(simulated.out).at(0)["step"]["experts"]["dispatch"]["time_s"].get<double>() > 0);
}

TEST_CASE("predict --ep: errors") {
  auto dense = run_treering(
      "predict --cluster dgx-h800 --nodes 1 --workload llama3.1-8b --ep 8 --scope step "
      "--seq-len 4k");
  CHECK(dense.exit_code == 2);
  CHECK(dense.err.find("no routed experts") != std::string::npos);
  auto uneven = run_treering(
      "predict --cluster dgx-h800 --nodes 2 --workload deepseek-v3 --tp 8 --ep 12 --scope step "
      "--seq-len 4k");
  CHECK(uneven.exit_code == 2);
  CHECK(uneven.err.find("--ep 12 is not a multiple of the 8 GPUs") != std::string::npos);
  auto micro = run_treering(
      "predict --cluster dgx-h800 --nodes 1 --workload deepseek-v3 --ep 8 --micro-batches 3 "
      "--scope step --seq-len 4k");
  CHECK(micro.exit_code == 2);
}

TEST_CASE("plan --tpot-target answers for DeepSeek-V3 on 4 x 8 H200") {
  auto result = run_treering(
      "plan --cluster dgx-h200 --nodes 4 --workload deepseek-v3 --seq-len 4k --tpot-target 50 --confirm 0 "
      "--format json");
  REQUIRE(result.exit_code == 0);
  const auto json = nlohmann::json::parse(result.out);
  CHECK(json["tpot_target_s"].get<double>() == doctest::Approx(0.050).scale(1e-12));
  const auto& ranked = json["ranked"];
  REQUIRE(!ranked.empty());
  bool any_ep = false;
  for (size_t i = 0; i < ranked.size(); ++i) {
    CHECK(ranked[i]["step_s"].get<double>() <= 0.050);
    if (i > 0)
      CHECK(ranked[i - 1]["tokens_per_s_per_gpu"].get<double>() >= ranked[i]["tokens_per_s_per_gpu"].get<double>());
    any_ep = any_ep || ranked[i]["ep"].get<int>() > 1;
  }
  CHECK(any_ep);
  auto table = run_treering(
      "plan --cluster dgx-h200 --nodes 4 --workload deepseek-v3 --seq-len 4k --tpot-target 50 --confirm 1");
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("tok/s/GPU") != std::string::npos);
  CHECK(table.out.find("choices meet the target") != std::string::npos);
  auto tight = run_treering("plan --cluster dgx-h200 --nodes 4 --workload deepseek-v3 --seq-len 4k --tpot-target 0.1");
  CHECK(tight.exit_code == 2);
  CHECK(tight.err.find("no layout meets 100 us a token") != std::string::npos);
}
