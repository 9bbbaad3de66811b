// `treering sweep --tp --cp --placement --scope`: the layouts people deploy, swept. Each row must be the row
// `predict` (or `simulate`) gives for the same layout and case: those commands' figures are the independent ones.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

using nlohmann::json;
using treering::cli::testing::read_file;
using treering::cli::testing::run_treering;

namespace {

json rows_of(const std::string& arguments) {
  const auto result = run_treering(arguments + " --format json");
  REQUIRE_MESSAGE(result.exit_code == 0, arguments, "\n", result.err);
  return json::parse(result.out);
}

}  // namespace

TEST_CASE("sweep --tp 8 --cp 2 --scope step: each row is predict's or simulate's row for the same layout") {
  const std::string layout =
      " --cluster dgx-h100 --nodes 2 --tp 8 --cp 2 --scope step --seq-len 80k,1M --algo tree,ring";
  const json swept = rows_of("sweep" + layout + " --engine model,sim");
  const json predicted = rows_of("predict" + layout);  // lengths outer, algorithms inner: 80k tree, 80k ring, 1M ...
  const json simulated = rows_of("simulate" + layout);
  REQUIRE(swept.size() == 8);  // 2 lengths x 2 algorithms x 2 engines, the engine fastest
  REQUIRE(predicted.size() == 4);
  REQUIRE(simulated.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const json& model = swept[2 * i];
    const json& sim = swept[2 * i + 1];
    CAPTURE(i);
    CHECK(model["engine"] == "model");
    CHECK(sim["engine"] == "sim");
    for (const json* row : {&model, &sim}) {
      CHECK((*row)["tp"] == 8);
      CHECK((*row)["cp"] == 2);
      CHECK((*row)["gpus"] == 16);  // 8 x 2, the two nodes' GPUs
      CHECK((*row)["placement"] == "tp-inner");
      CHECK((*row)["scope"] == "step");
    }
    for (const char* column :
         {"algo", "seq_len", "latency_s", "step_s", "layer_s", "tokens_per_s", "peak_memory_bytes"}) {
      CAPTURE(column);
      CHECK(model[column] == predicted[i][column]);
      CHECK(sim[column] == simulated[i][column]);
    }
    CHECK(model["model_latency_s"] == predicted[i]["latency_s"]);
    CHECK(sim["model_latency_s"] == predicted[i]["latency_s"]);  // the model's figure beside the simulated one
  }
}

TEST_CASE("sweep --cp 2 --placement cp-inner over node counts: tp takes the rest of each count's GPUs") {
  // --cp 2 alone: tp = GPUs / 2, i.e. 4 on one DGX H100 (8 GPUs) and 8 on two (16 GPUs), as predict places it.
  const json swept =
      rows_of("sweep --cluster dgx-h100 --nodes 1,2 --cp 2 --placement cp-inner --seq-len 128k --algo tree");
  REQUIRE(swept.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const json predicted = rows_of("predict --cluster dgx-h100 --nodes " + std::to_string(i + 1) +
                                   " --cp 2 --placement cp-inner --seq-len 128k --algo tree");
    CHECK(swept[i]["tp"] == 4 * (i + 1));
    CHECK(swept[i]["cp"] == 2);
    CHECK(swept[i]["placement"] == "cp-inner");
    CHECK(swept[i]["latency_s"] == predicted[0]["latency_s"]);
  }
}

TEST_CASE("sweep's worker processes and its table carry the layout") {
  const std::string dir = std::string(TREERING_BINARY_DIR) + "/tests/";
  const std::string axes =
      "sweep --cluster dgx-h100 --nodes 2,4 --tp 8 --scope layer --seq-len 80k,1M --engine model,sim -o ";
  REQUIRE(run_treering(axes + dir + "sweep-layout-serial.csv").exit_code == 0);
  REQUIRE(run_treering(axes + dir + "sweep-layout-jobs.csv --jobs 2").exit_code == 0);
  const std::string serial = read_file(dir + "sweep-layout-serial.csv");
  CHECK(serial.find(
            ",tp,cp,replicas,placement,attention_parallelism,cluster_nodes,first_call_s,fits,does_not_fit,scope,") !=
        std::string::npos);
  CHECK(serial.find(",8,4,1,tp-inner,tp,4,") != std::string::npos);  // 4 nodes: 32 GPUs, tp 8 leaves cp 4
  CHECK(serial.find(",layer,") != std::string::npos);
  CHECK(serial.find(",model_latency_s,layer_s,step_s,tokens_per_s,") != std::string::npos);  // the step's columns
  CHECK(serial == read_file(dir + "sweep-layout-jobs.csv"));

  const auto table =
      run_treering("sweep --cluster dgx-h100 --nodes 2 --tp 8 --cp 2 --scope step --seq-len 80k --algo tree");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("layout") != std::string::npos);
  CHECK(table.out.find("tp 8 x cp 2") != std::string::npos);
  CHECK(table.out.find("per token") != std::string::npos);
}

TEST_CASE("sweep: a layout that does not fit a node count is an error naming it, exit 2") {
  // tp 8 x cp 2 = 16 GPUs; one DGX H100 has 8.
  const auto result = run_treering("sweep --cluster dgx-h100 --nodes 1,2 --tp 8 --cp 2 --seq-len 80k");
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("at 1 node (8 GPUs)") != std::string::npos);
  CHECK(run_treering("sweep --cluster dgx-h100 --seq-len 80k --scope token").exit_code == 2);
  CHECK(run_treering("sweep --cluster dgx-h100 --seq-len 80k --placement sideways").exit_code == 2);
}

TEST_CASE("sweep: cases that do not fit in memory are computed and marked, the others unaffected") {
  // llama3.1-70b without TP: 141.2 GB of bf16 weights on every 80 GB GPU, at 1 and 2 nodes alike; with --tp 8
  // --scope step the weights split 8 ways and the step fits.
  const auto table =
      run_treering("sweep --cluster dgx-h100 --nodes 1,2 --workload llama3.1-70b --seq-len 128k --algo tree");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("no !") != std::string::npos);
  CHECK(table.out.find("! tree at 128000 tokens on 8 GPUs, batch 1 does not fit: it needs") != std::string::npos);
  const json rows =
      json::parse(run_treering("sweep --cluster dgx-h100 --nodes 1,2 --workload llama3.1-70b --seq-len 128k "
                               "--algo tree --format json")
                      .out);
  REQUIRE(rows.size() == 2);
  for (const json& row : rows) CHECK(row["fits"] == 0);
  const auto step = run_treering(
      "sweep --cluster dgx-h100 --nodes 1,2 --workload llama3.1-70b --seq-len 128k --algo tree "
      "--tp 8 --scope step --format json");
  REQUIRE_MESSAGE(step.exit_code == 0, step.err);
  for (const json& row : json::parse(step.out)) CHECK(row["fits"] == 1);
}
