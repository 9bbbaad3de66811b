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
    CHECK(json["nic_bytes_per_gpu"].get<double>() == doctest::Approx(128 * 8 * 7408.0));
    CHECK(json["nvlink_bytes_per_gpu"].get<double>() == 0);
    // at least that over one 400 Gb/s NIC at 0.92 (46 GB/s), and alone on its routes the replay agrees
    CHECK(json["time_s"].get<double>() > 128 * 8 * 7408.0 / 46e9);
    CHECK(json["simulated_time_s"].get<double>() == doctest::Approx(json["time_s"].get<double>()).epsilon(1e-6));
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
