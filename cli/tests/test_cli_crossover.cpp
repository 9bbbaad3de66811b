// `treering crossover`: one cell per (GPU count, length), the speedup being the two algorithms' latency ratio.
#include <doctest/doctest.h>

#include <fstream>
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

namespace {

// A profile like efficient whose predictions are exact (e = 0) or nearly unbounded (e = 0.99).
std::string profile_with_error(const std::string& name, double error) {
  const std::string path = std::string(TREERING_BINARY_DIR) + "/tests/" + name + ".yaml";
  std::ofstream(path) << "name: " << name << "\ndescription: \"test\"\nimplementation: \"test\"\n"
                      << "uncertainty: {compute: " << error << ", communication: " << error << ", source: \"test\"}\n";
  return path;
}

}  // namespace

TEST_CASE("crossover and tune say which choices lie within each other's band") {
  const std::string exact = profile_with_error("band-exact", 0.0);
  const std::string loose = profile_with_error("band-loose", 0.99);
  // e = 0.99: a latency x has the band [x / 1.99, x / 0.01], so two latencies a < b overlap iff b / a <= 199. On one
  // DGX H100 at 80k tokens the ring is ~20x the tree (well under 199): within band. With e = 0 nothing is.
  for (const auto& [profile, within] : {std::pair{exact, false}, std::pair{loose, true}}) {
    const auto cells = nlohmann::json::parse(
        run_treering("crossover --cluster dgx-h100 --nodes 1 --seq-len 80k --format json --impl " + profile).out);
    CHECK(cells[0]["speedup"].get<double>() < 199);
    CHECK(cells[0]["within_band"] == within);
    const double tree_s = cells[0]["first_latency_s"].get<double>();
    CHECK(cells[0]["first_latency_s_low"].get<double>() == doctest::Approx(tree_s / (within ? 1.99 : 1.0)));
  }
  const auto table = run_treering("crossover --cluster dgx-h100 --nodes 1 --seq-len 80k --impl " + loose);
  CHECK(table.out.find("x ~") != std::string::npos);  // "20.23x ~": the ratio, marked
  CHECK(table.out.find("outside the bands from  never") != std::string::npos);

  // tune: with e = 0 no distinct strategy is within the best's band; with e = 0.99 every one is (all within 199x).
  const std::string tune = "tune --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 20k --confirm 1 --format json --impl ";
  const auto none = nlohmann::json::parse(run_treering(tune + exact).out);
  CHECK(none["within_best_band"] == 0);
  const auto all = nlohmann::json::parse(run_treering(tune + loose).out);
  const auto& strategies = all["strategies"];
  CHECK(all["ring_latency_s"].get<double>() / all["best_latency_s"].get<double>() < 199);
  CHECK(all["within_best_band"] == strategies.size() - 1);
  CHECK(strategies[1]["within_best_band"] == true);
  CHECK(strategies[0]["latency_s_low"].get<double>() == doctest::Approx(strategies[0]["latency_s"].get<double>() / 1.99));
}
