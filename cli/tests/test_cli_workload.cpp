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
  CHECK(names == std::vector<std::string>{"efficient", "meta-cp-decode", "paper-jax-microbench", "paper-torch-llama",
                                          "treering-realrun-cpu"});
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
