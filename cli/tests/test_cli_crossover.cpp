// `treering crossover`: one cell per (GPU count, length), the speedup being the two algorithms' latency ratio.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("crossover --format json: a cell per (GPUs, length), speedup = second's latency / first's") {
  const auto result = run_treering("crossover --cluster dgx-h100 --nodes 1,2 --seq-len 80k,1M --format json");
  REQUIRE(result.exit_code == 0);
  const auto cells = nlohmann::json::parse(result.out);
  REQUIRE(cells.size() == 4);
  CHECK(cells[0]["gpus"] == 8);
  CHECK(cells[1]["seq_len"] == 1000000);
  CHECK(cells[2]["gpus"] == 16);
  // The same case from predict: the ratio of its ring and tree latencies.
  const auto predicted = nlohmann::json::parse(
      run_treering("predict --cluster dgx-h100 --nodes 2 --seq-len 1M --algo tree,ring --format json").out);
  const double ratio = predicted[1]["latency_s"].get<double>() / predicted[0]["latency_s"].get<double>();
  CHECK(cells[3]["speedup"].get<double>() == doctest::Approx(ratio).epsilon(1e-12));
  CHECK(cells[3]["winner"] == (ratio > 1 ? "tree" : "ring"));
}

TEST_CASE("crossover: the table names where the first wins; two different algorithms are needed") {
  const auto result = run_treering("crossover --cluster dgx-h100 --nodes 1 --seq-len 80k,160k");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("tree wins from") != std::string::npos);
  CHECK(run_treering("crossover --cluster dgx-h100 --algo tree,tree").exit_code == 2);
  CHECK(run_treering("crossover --cluster dgx-h100 --algo tree").exit_code == 2);
}
