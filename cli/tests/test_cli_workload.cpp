// `treering workload ...` and `treering info`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

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
