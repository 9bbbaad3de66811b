// Deployed decode from the command line: TP x CP layouts with the engines' combines, --scope step, treering
// plan, crossover --vs tp, and Hugging Face config.json workloads.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using nlohmann::json;
using treering::cli::testing::run_treering;

namespace {

json predict_json(const std::string& arguments) {
  auto result = run_treering("predict --format json " + arguments);
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  return json::parse(result.out);
}

}  // namespace

TEST_CASE("predict: llama3.1-405b-fp8 at tp 8 x cp 2, the engines' combines, attention and step scopes") {
  const std::string common = "--cluster dgx-h100 --nodes 2 --workload llama3.1-405b-fp8 --seq-len 128k --batch 1,4 ";
  const json attention = predict_json(common + "--tp 8 --cp 2 --algo pass-q,a2a,ag-rs,tree --scope attention");
  REQUIRE(attention.size() == 8);  // 2 batches x 4 combines
  for (const json& row : attention) {
    CHECK(row["tp"] == 8);
    CHECK(row["cp"] == 2);
    CHECK(row["scope"] == "attention");
    CHECK(row["breakdown"].contains("inter_node_s"));
    CHECK(row["volume_bytes"]["inter_node"].get<double>() > 0);  // each CP group pairs GPU t with GPU 8 + t
  }
  CHECK(attention[0]["algo"] == "pass-q");
  CHECK(attention[4]["batch"] == 4);
  const json step = predict_json(common + "--tp 8 --cp 2 --algo pass-q,a2a,ag-rs,tree --scope step");
  REQUIRE(step.size() == 8);
  for (size_t i = 0; i < step.size(); ++i) {
    const json& b = step[i]["step"]["breakdown"];
    CHECK(step[i]["scope"] == "step");
    // 126 layers of attention are part of the step, and the parts add up to it.
    CHECK(b["attention_s"].get<double>() ==
          doctest::Approx(126 * attention[i]["latency_s"].get<double>()).scale(1e-12));
    const double parts = b["attention_s"].get<double>() + b["projections_s"].get<double>() + b["mlp_s"].get<double>() +
                         b["tp_communication_s"].get<double>() + b["other_s"].get<double>() +
                         b["lm_head_s"].get<double>();
    CHECK(step[i]["step_s"].get<double>() == doctest::Approx(parts).scale(1e-12));
    CHECK(step[i]["tokens_per_s"].get<double>() ==
          doctest::Approx(step[i]["batch"].get<double>() / step[i]["step_s"].get<double>()).scale(1e-12));
  }
  const json tp16 = predict_json(common + "--tp 16 --algo tree --scope step");
  REQUIRE(tp16.size() == 2);
  CHECK(tp16[0]["tp"] == 16);
  CHECK(tp16[0]["cp"] == 1);
  CHECK(tp16[0]["volume_bytes"]["total"] == 0.0);  // one GPU per CP group: nothing to combine
  CHECK(tp16[0]["step_s"].get<double>() > 0);
}

TEST_CASE("plan: the top choice is no slower than plain TP or the paper's tree as predict gives them") {
  auto result =
      run_treering("plan --cluster dgx-h100 --nodes 2 --workload llama3.1-8b --seq-len 128k --confirm 1 --format json");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const json plan = json::parse(result.out);
  REQUIRE(plan["ranked"].size() > 0);
  const json& fastest = plan["ranked"][plan["fastest_rank"].get<int>() - 1];
  const double best_s = fastest["step_s"].get<double>();
  CHECK(plan["ranked"][0]["simulated_step_s"].get<double>() > 0);
  for (const char* layout : {"--tp 8 --cp 1", "--tp 16 --cp 1", "--tp 1 --cp 16"}) {
    CAPTURE(layout);
    const json row =
        predict_json("--cluster dgx-h100 --nodes 2 --workload llama3.1-8b --seq-len 128k --algo tree --scope step " +
                     std::string(layout))[0];
    CHECK(best_s <= row["step_s"].get<double>() * (1 + 1e-9));
  }
  auto table =
      run_treering("plan --cluster dgx-h100 --nodes 2 --workload llama3.1-70b --seq-len 128k --confirm 0 --top 3");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("layout") != std::string::npos);
  CHECK(table.out.find(" x cp ") != std::string::npos);  // "tp 16 x cp 1": the layout as engines name it
  auto none = run_treering("plan --cluster dgx-h100 --nodes 1 --workload llama3.1-405b --seq-len 10M");
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no layout fits") != std::string::npos);
}

TEST_CASE("crossover --vs tp: one row per GPU count, length and batch; the winner follows the times") {
  auto result = run_treering(
      "crossover --vs tp --cluster dgx-h100 --nodes 1,2 --workload llama3.1-8b --seq-len 32k,1M "
      "--batch 1,8 --format json");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const json rows = json::parse(result.out);
  REQUIRE(rows.size() == 8);  // 2 node counts x 2 lengths x 2 batches
  for (const json& row : rows) {
    if (row["cp_best"].is_null() || row["tp_best"].is_null()) continue;
    CHECK(row["cp_best"]["cp"].get<int>() > 1);
    CHECK(row["tp_best"]["cp"] == 1);
    const bool cp_faster = row["cp_best"]["step_s"].get<double>() < row["tp_best"]["step_s"].get<double>();
    CHECK(row["winner"] == (cp_faster ? "cp" : "tp"));
  }
  auto table = run_treering(
      "crossover --vs tp --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 32k,1M --batch 1,8");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("cp wins from") != std::string::npos);
}

TEST_CASE("a Hugging Face config.json is a workload; a broken one is an error at its line and column") {
  const auto directory = std::filesystem::temp_directory_path() / "treering-cli-hf";
  std::filesystem::create_directories(directory);
  const std::string good = (directory / "config.json").string();
  std::ofstream(good)
      << R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
 "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256, "torch_dtype": "bfloat16"})";
  // The same shape as the llama3.1-8b preset: the same step.
  const json from_file =
      predict_json("--cluster dgx-h100 --workload " + good + " --tp 8 --algo tree --seq-len 32k --scope step")[0];
  const json preset =
      predict_json("--cluster dgx-h100 --workload llama3.1-8b --tp 8 --algo tree --seq-len 32k --scope step")[0];
  CHECK(from_file["workload"] == "treering-cli-hf");
  CHECK(from_file["step_s"].get<double>() ==
        doctest::Approx(preset["step_s"].get<double>()).scale(1e-12).epsilon(1e-3));
  const std::string bad = (directory / "bad.json").string();
  std::ofstream(bad) << "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": -3\n}";
  auto result = run_treering("predict --cluster dgx-h100 --workload " + bad + " --seq-len 32k");
  CHECK(result.exit_code == 2);
  CHECK(result.err.find(bad + ":3:3: error: 'num_hidden_layers' must be a whole number") != std::string::npos);
}

TEST_CASE("crossover --vs tp: lengths where neither fits do not hide where cp starts winning") {
  // llama3.1-70b at batch 16 on 16 H100: cp wins at 32k and 64k, only cp fits at 128k, nothing fits from 256k.
  // cp wins at every length where something fits, so it wins from 32k, whatever the longer lengths hold.
  for (const char* lengths : {"32k:4M:x2", "32k:128k:x2"}) {
    CAPTURE(lengths);
    auto result = run_treering(
        std::string("crossover --vs tp --cluster dgx-h100 --nodes 2 --workload llama3.1-70b --batch 16 --seq-len ") +
        lengths);
    REQUIRE_MESSAGE(result.exit_code == 0, result.err);
    const size_t row = result.out.find("cp wins from");
    REQUIRE(row != std::string::npos);
    const std::string line = result.out.substr(row, result.out.find('\n', row) - row);
    CHECK(line.find("32k") != std::string::npos);
    CHECK(line.find("never") == std::string::npos);
  }
}

TEST_CASE("--scope layer makes no token: tokens_per_s is null in JSON and empty in CSV, set with --scope step") {
  const std::string common = "--cluster dgx-h100 --nodes 1 --workload llama3.1-8b --tp 8 --algo tree --seq-len 32k ";
  const json layer = predict_json(common + "--scope layer")[0];
  CHECK(layer["tokens_per_s"].is_null());  // was batch / one layer's time: 32 times the step's rate
  const json step = predict_json(common + "--scope step")[0];
  CHECK(step["tokens_per_s"].get<double>() ==
        doctest::Approx(1.0 / step["step_s"].get<double>()).scale(1e-12));  // batch 1
  auto csv = run_treering("predict --format csv " + common + "--scope layer");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",layer,") != std::string::npos);
}

TEST_CASE("plan: layouts whose bands meet the fastest's are a tie, shown as one, the least cross-node time first") {
  // llama3.1-405b at 128k on 16 DGX H100: TP 64 across 8 nodes is the fastest by the bare figure, with most of its
  // time in cross-node all-reduces (where the model is 20-42 % low for TP across nodes); TP 16 over 2 nodes, in
  // the tie, spends less time across nodes and comes first. TP-only rows have no combine: "algo" is "none".
  const std::string command = "plan --cluster dgx-h100 --nodes 16 --workload llama3.1-405b --seq-len 128k --confirm 0";
  auto result = run_treering(command + " --format json");
  REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const json plan = json::parse(result.out);
  const json& ranked = plan["ranked"];
  const json& fastest = ranked[plan["fastest_rank"].get<int>() - 1];
  CHECK(fastest["tp"] == 64);
  CHECK(fastest["algo"] == "none");
  CHECK(ranked[0]["tp"] == 16);
  CHECK(ranked[0]["tp_only"] == true);
  CHECK(ranked[0]["algo"] == "none");
  size_t tied = 0;
  for (const json& row : ranked) {
    if (!row["within_best_band"].get<bool>()) break;
    ++tied;
    CHECK(row["step_s_low"].get<double>() <= fastest["step_s_high"].get<double>());  // the bands meet
    CHECK(row["step_s_high"].get<double>() >= fastest["step_s_low"].get<double>());
    if (tied > 1)
      CHECK(ranked[tied - 2]["cross_node"]["time_s"].get<double>() <= row["cross_node"]["time_s"].get<double>());
  }
  for (size_t i = tied; i < ranked.size(); ++i) CHECK_FALSE(ranked[i]["within_best_band"].get<bool>());
  CHECK(tied > 1);
  auto table = run_treering(command + " --top 3");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("#1-#" + std::to_string(tied) + " are a tie within the model's uncertainty") !=
        std::string::npos);
  CHECK(table.out.find(" ms - ") != std::string::npos);  // each row shows its band
}

TEST_CASE("progress lines go to stderr only on a terminal, or with --progress") {
  // The tests' stderr is a pipe: plan's "simulating choice 1 of 1..." only when asked for.
  const std::string command =
      "plan --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 32k --confirm 1 --top 1";
  auto quiet = run_treering(command);
  REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.err);
  CHECK(quiet.err.find("simulating") == std::string::npos);
  auto asked = run_treering(command + " --progress");
  REQUIRE(asked.exit_code == 0);
  CHECK(asked.err.find("simulating choice 1 of 1...") != std::string::npos);
  CHECK(asked.out == quiet.out);  // progress never enters the output
}

TEST_CASE("predict and plan: DeepSeek-V3 on 8 H200s under TP, decode context parallelism and DP attention") {
  const std::string common = "--cluster dgx-h200 --nodes 1 --workload deepseek-v3 --seq-len 4k,128k --batch 1,64 ";
  const json tp = predict_json(common + "--tp 8 --scope step --algo tree");
  const json dcp = predict_json(common + "--tp 8 --dcp 8 --scope step --algo a2a,ag-rs");
  REQUIRE(tp.size() == 4);
  REQUIRE(dcp.size() == 8);
  CHECK(dcp[0]["attention_parallelism"] == "dcp");
  CHECK(dcp[0]["cp"] == 8);  // the 8 GPUs of the TP group split the tokens; each attends all 128 heads
  // batch 1 at 128k: the latent of one sequence is 128,000 x 70,272 B = 8.99 GB; TP keeps it on every GPU, DCP an
  // eighth of it on each
  CHECK(tp[1]["step"]["memory_bytes"]["kv_cache"].get<double>() == doctest::Approx(8.994816e9).scale(1e-4));
  CHECK(dcp[2]["step"]["memory_bytes"]["kv_cache"].get<double>() == doctest::Approx(8.994816e9 / 8).scale(1e-4));
  const json data = predict_json(common + "--tp 8 --dp-attention --scope layer --algo a2a");
  CHECK(data[0]["attention_parallelism"] == "dp-attention");
  auto refused = run_treering("predict " + common + "--tp 8 --dcp 3");
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("--dcp 3 must divide --tp 8") != std::string::npos);
  refused = run_treering("predict " + common + "--tp 8 --dcp 8 --algo pass-q");
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("pass-q leaves each rank its own sequences") != std::string::npos);
  auto plan = run_treering("plan --cluster dgx-h200 --nodes 1 --workload deepseek-v3 --seq-len 128k --top 40");
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
  CHECK(plan.out.find("(dcp 8)") != std::string::npos);
  CHECK(plan.out.find("dp attention") != std::string::npos);
  CHECK(plan.out.find("tp 8 x cp 1") != std::string::npos);
  CHECK(plan.out.find("why (memory, communication, compute") != std::string::npos);
}
