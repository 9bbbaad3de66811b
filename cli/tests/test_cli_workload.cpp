// `treering workload ...`, `treering impl ...` and `treering info`.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("workload list and show") {
  auto list = run_treering("workload list");
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("paper-mha16") != std::string::npos);
  auto show = run_treering("workload show llama3.1-8b --format json");
  REQUIRE(show.exit_code == 0);
  auto json = nlohmann::json::parse(show.out);
  CHECK(json["kv_heads"] == 8);
  CHECK(json["kv_cache_bytes_per_token"].get<double>() == doctest::Approx(131072).scale(1e-12));  // 2*8*128*2*32
  auto unknown = run_treering("workload show gpt5");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.rfind("error: unknown workload 'gpt5'", 0) == 0);
}

TEST_CASE("workload show deepseek-v3: latent attention, active parameters, weights, the MoE shape") {
  auto show = run_treering("workload show deepseek-v3");
  REQUIRE_MESSAGE(show.exit_code == 0, show.err);
  // Parameters (model/tests/test_latent_workloads.cpp): 671,026,404,352 total, 37,552,282,624 active.
  CHECK(show.out.find("parameters:         671B\n") != std::string::npos);
  CHECK(show.out.find("active parameters:  37.6B\n") != std::string::npos);
  CHECK(
      show.out.find("attention:          multi-head latent: 512 + 64 per token (q_lora_rank 1536, nope 128, v 128)") !=
      std::string::npos);
  // 576 values x 2 B x 61 layers = 70,272 B
  CHECK(show.out.find("KV cache per token: 70.27 kB (all layers; latent: 576 values of bf16 a layer)") !=
        std::string::npos);
  // fp8 with a 4 B scale per 128 x 128 tile: 1 + 4 / 16384 B a parameter, for attention 61 x 187,107,328 =
  // 11,413,547,008 and MLPs 3 x 396,361,728 + 58 x (257 x 44,040,192 + 256 x 7168) = 657,758,617,600:
  // 669,172,164,608 x (1 + 1/4096) = 669,335,536,718.5 B; bf16: norms 61 x 2 x 7168 = 874,496 and embedding, LM head,
  // final norm 2 x 129,280 x 7168 + 7168 = 1,853,365,248, x 2 B = 3,708,479,488 B: 673,044,016,206.5 B
  CHECK(show.out.find("weights:            673 GB (fp8 MLP, fp8 attention, fp8 scaled per 128 x 128)") !=
        std::string::npos);
  CHECK(show.out.find("MoE:                256 routed experts of 2048, 8 per token, 1 shared; first 3 layers dense; 8 "
                      "groups, 4 per token") != std::string::npos);
  auto json_run = run_treering("workload show deepseek-v3 --format json");
  REQUIRE(json_run.exit_code == 0);
  const auto json = nlohmann::json::parse(json_run.out);
  CHECK(json["kv_heads"] == 1);
  CHECK(json["head_dim"] == 576);
  CHECK(json["attention"] == "multi-head latent");
  CHECK(json["latent_attention"]["kv_lora_rank"] == 512);
  CHECK(json["latent_attention"]["q_lora_rank"] == 1536);
  CHECK(json["parameters"].get<double>() == 671026404352.0);
  CHECK(json["active_parameters"].get<double>() == 37552282624.0);
  CHECK(json["kv_cache_bytes_per_token"].get<double>() == 70272.0);
  CHECK(json["weight_bytes"].get<double>() == doctest::Approx(673044016206.5).scale(1e12).epsilon(1e-12));
  CHECK(json["moe"]["experts"] == 256);
  CHECK(json["moe"]["first_k_dense_replace"] == 3);
  CHECK(json["moe"]["n_group"] == 8);
  CHECK(json["moe"]["topk_group"] == 4);
}

TEST_CASE("workload show of a dense model and of DeepSeek-V3's config.json; workload list's active column") {
  auto llama = run_treering("workload show llama3.1-8b --format json");
  REQUIRE(llama.exit_code == 0);
  const auto dense = nlohmann::json::parse(llama.out);
  CHECK(dense["attention"] == "grouped-query");
  CHECK(dense["moe"].is_null());
  CHECK(dense["latent_attention"].is_null());
  CHECK(dense["active_parameters"] == dense["parameters"]);  // a dense model runs every parameter
  auto table = run_treering("workload show llama3.1-8b");
  CHECK(table.out.find("attention:          grouped-query: 32 query / 8 KV heads x 128\n") != std::string::npos);
  CHECK(table.out.find("MoE:") == std::string::npos);
  auto file = run_treering("workload show topologies/examples/DeepSeek-V3/config.json --format json");
  REQUIRE_MESSAGE(file.exit_code == 0, file.err);
  const auto loaded = nlohmann::json::parse(file.out);
  CHECK(loaded["name"] == "DeepSeek-V3");                       // its folder
  CHECK(loaded["parameters"].get<double>() == 671026404352.0);  // as the preset: counted from the shape
  CHECK(loaded["description"].get<std::string>().find("MTP module left out") != std::string::npos);
  auto list = run_treering("workload list");
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find(" active ") != std::string::npos);
  // deepseek-v2-lite: 15,706,484,224 total, 2,661,150,208 active (test_latent_workloads.cpp)
  const size_t lite = list.out.find("deepseek-v2-lite");
  REQUIRE(lite != std::string::npos);
  const std::string row = list.out.substr(lite, list.out.find('\n', lite) - lite);
  CHECK(row.find(" 15.7B ") != std::string::npos);
  CHECK(row.find(" 2.66B ") != std::string::npos);
  // kimi-k2: 1,026,408,209,408 parameters (test_latent_workloads.cpp) read "1.03T", not "1.03e+03B"
  const size_t kimi = list.out.find("kimi-k2");
  REQUIRE(kimi != std::string::npos);
  CHECK(list.out.substr(kimi, list.out.find('\n', kimi) - kimi).find(" 1.03T ") != std::string::npos);
}

TEST_CASE("info says what was built") {
  auto result = run_treering("info");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("event loop, SimGrid's sharing rules (SimGrid 3.") != std::string::npos);
  CHECK(result.out.find("CUDA:") != std::string::npos);
}

TEST_CASE("impl list | show: the profiles --impl names, and one as YAML that --impl reads back") {
  auto list = run_treering("impl list --format json");
  REQUIRE_MESSAGE(list.exit_code == 0, list.err);
  const auto profiles = nlohmann::json::parse(list.out);
  std::vector<std::string> names;
  for (const auto& profile : profiles) names.push_back(profile["name"]);
  CHECK(names == std::vector<std::string>{"efficient", "lmdeploy-turbomind", "meta-cp-decode", "paper-jax-microbench",
                                          "paper-torch-llama", "sglang", "treering-realrun-cpu", "trtllm", "vllm",
                                          "vllm-rocm"});
  auto shown = run_treering("impl show paper-torch-llama");
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.find("eager_dispatch:") != std::string::npos);
  CHECK(shown.out.find("communication: 0.23\n") != std::string::npos);  // shortest form, not 0.23000000000000001
  const std::string file =
      std::filesystem::temp_directory_path() / ("treering-impl-show-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << shown.out;
  const std::string predict =
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 20k --algo ring --format json --impl ";
  auto by_name = run_treering(predict + "paper-torch-llama");
  auto by_file = run_treering(predict + file);
  std::filesystem::remove(file);
  REQUIRE(by_file.exit_code == 0);
  CHECK(nlohmann::json::parse(by_name.out)[0]["latency_s"] == nlohmann::json::parse(by_file.out)[0]["latency_s"]);
  CHECK(run_treering("impl show nope").exit_code == 2);
}
