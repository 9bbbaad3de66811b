// `treering predict`: the JSON schema the issue asks for, CSV, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using treering::cli::testing::run_treering;

TEST_CASE("predict --format json: one object per (length, algorithm) with the documented keys") {
  auto result = run_treering(
      "predict --cluster dgx-h100 --nodes 2 --workload paper-mha16 --seq-len 80k,5.12M "
      "--algo tree,ring --format json");
  REQUIRE(result.exit_code == 0);
  auto rows = nlohmann::json::parse(result.out);
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    for (const char* key : {"algo", "cluster", "nodes", "gpus", "seq_len", "latency_s", "breakdown", "volume_bytes",
                            "peak_memory_bytes"}) {
      CHECK_MESSAGE(row.contains(key), key);
    }
    for (const char* key : {"per_gpu", "intra_node", "inter_node", "total"}) CHECK(row["volume_bytes"].contains(key));
  }
  CHECK(rows[0]["algo"] == "tree");
  CHECK(rows[0]["seq_len"] == 80000);
  CHECK(rows[0]["gpus"] == 16);
  CHECK(rows[3]["seq_len"] == 5120000);
  // 5.12M tokens over 16 GPUs: 320,000 per GPU x 8 KiB = 2.62 GB of KV cache each.
  CHECK(rows[2]["memory_bytes"]["kv_cache"].get<double>() == 320000.0 * 8192);
}

TEST_CASE("predict: CSV and a generation estimate for a real model") {
  auto csv = run_treering(
      "predict --cluster dgx-h100 --nodes 2 --workload llama3.1-8b --seq-len 128k --algo tree "
      "--tokens 100 --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("algo,engine,cluster,nodes,gpus,workload,batch,seq_len,latency_s,", 0) == 0);
  CHECK(csv.out.find("generation_s") != std::string::npos);
  auto json = run_treering(
      "predict --cluster dgx-h100 --nodes 2 --workload llama3.1-8b --seq-len 128k --algo tree "
      "--tokens 100 --format json");
  auto row = nlohmann::json::parse(json.out)[0];
  CHECK(row["generation_s"].get<double>() > 100 * row["token_s"].get<double>());
}

TEST_CASE("predict: impossible requests exit 2 with a reason") {
  auto zero = run_treering("predict --cluster dgx-h100 --seq-len 0");
  CHECK(zero.exit_code == 2);
  CHECK(zero.err.find("whole number of tokens") != std::string::npos);
  auto algo = run_treering("predict --cluster dgx-h100 --seq-len 1M --algo star");
  CHECK(algo.exit_code == 2);
  CHECK(algo.err.rfind("error: unknown algorithm 'star'", 0) == 0);
  CHECK(run_treering("predict --cluster dgx-h100 --seq-len 1M --nodes 0").exit_code == 2);
  CHECK(run_treering("predict --cluster dgx-h100 --seq-len 1M --batch 0").exit_code == 2);
  CHECK(run_treering("predict --cluster dgx-h100 --seq-len 1M --workload gpt5").exit_code == 2);
  CHECK(run_treering("predict --seq-len 1M").exit_code == 2);
}

TEST_CASE("predict: a workload file, and --prefill adds the prompt's estimate") {
  auto result = run_treering(
      "predict --cluster dgx-h100 --nodes 2 --workload topologies/workloads/qwen2.5-7b.yaml "
      "--seq-len 128k --algo tree --tokens 10 --prefill --format json");
  REQUIRE(result.exit_code == 0);
  auto row = nlohmann::json::parse(result.out)[0];
  CHECK(row["workload"] == "qwen2.5-7b");
  CHECK(row["prefill_s"].get<double>() > 0);
  CHECK(row["generation_s"].get<double>() > row["prefill_s"].get<double>() + 10 * row["token_s"].get<double>() * 0.99);
  auto bad =
      run_treering("predict --cluster dgx-h100 --seq-len 1k --workload topologies/tests/bad-workloads/bad-dtype.yaml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "topologies/tests/bad-workloads/bad-dtype.yaml:7:8: error: dtype must be bf16 or fp16, got 'fp8'\n");
}

TEST_CASE("predict --gpus: a subset, in the ring order asked for") {
  // Two GPUs in different nodes: the ring's single edge each way crosses the network.
  auto pair = run_treering("predict --cluster dgx-h100 --nodes 2 --seq-len 1M --algo ring --gpus 0,8 --format json");
  REQUIRE(pair.exit_code == 0);
  auto row = nlohmann::json::parse(pair.out)[0];
  CHECK(row["gpus"] == 2);
  CHECK(row["volume_bytes"]["intra_node"].get<double>() == 0.0);
  // 1M tokens over 2 GPUs: each forwards its 500,000-token block once, 500,000 x 8 KiB.
  CHECK(row["volume_bytes"]["inter_node"].get<double>() == 2 * 500000.0 * 8192);
  CHECK(run_treering("predict --cluster dgx-h100 --nodes 2 --seq-len 1M --gpus 0,99").exit_code == 2);
  CHECK(run_treering("predict --cluster dgx-h100 --nodes 2 --seq-len 1M --gpus 0,0").exit_code == 2);
}

TEST_CASE("predict --impl: the profile's name, its band and its errors in JSON; a bad profile is an error") {
  auto result = run_treering(
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-8b --seq-len 20k --algo tree,ring "
      "--tokens 10 --prefill --impl paper-torch-llama --format json");
  REQUIRE(result.exit_code == 0);
  for (const auto& row : nlohmann::json::parse(result.out)) {
    CHECK(row["impl"] == "paper-torch-llama");
    const double latency_s = row["latency_s"].get<double>();
    // Uncalibrated: compute (host time included) within 50 %, communication within 23 % (the profile's uncertainty).
    const double compute_s = row["breakdown"]["compute_s"].get<double>() + row["breakdown"]["host_s"].get<double>();
    const double communication_s = latency_s - compute_s;
    CHECK(row["latency_s_low"].get<double>() == doctest::Approx(compute_s / 1.5 + communication_s / 1.23).scale(1e-12));
    CHECK(row["latency_s_high"].get<double>() ==
          doctest::Approx(compute_s / 0.5 + communication_s / 0.77).scale(1e-12));
    CHECK(row["generation_s_low"].get<double>() < row["generation_s"].get<double>());
    CHECK(row["generation_s_high"].get<double>() > row["generation_s"].get<double>());
    CHECK(row["breakdown"]["host_s"].get<double>() > 0);  // the barrier's host round trip at least
  }
  auto unknown = run_treering("predict --cluster dgx-h100 --seq-len 1k --impl no-such-impl");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown implementation profile 'no-such-impl'") != std::string::npos);
}

namespace {

// The fields of one CSV record (RFC 4180: quoted fields may hold commas; "" is a quote inside them).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += ch;
    }
  }
  return fields;
}

}  // namespace

TEST_CASE("predict: CSV has the JSON's numbers to the last bit, and quotes only what needs it") {
  const std::string command =
      "predict --cluster dgx-h100 --nodes 2 --workload llama3.1-8b --seq-len 100001 --algo tree,ring --format ";
  const auto csv = run_treering(command + "csv");
  const auto json = nlohmann::json::parse(run_treering(command + "json").out);
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header_line, line;
  std::getline(lines, header_line);
  const std::vector<std::string> header = csv_fields(header_line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (const auto& row : json) {
    REQUIRE(std::getline(lines, line));
    CHECK(line.find('"') == std::string::npos);  // no field here holds a comma or a quote: none is quoted
    const std::vector<std::string> fields = csv_fields(line);
    REQUIRE(fields.size() == header.size());
    CHECK(fields[column("cluster")] == row["cluster"].get<std::string>());
    // 6 significant digits (the old output) would round these; the shortest exact form reads back bit for bit.
    CHECK(std::strtod(fields[column("latency_s")].c_str(), nullptr) == row["latency_s"].get<double>());
    CHECK(std::strtod(fields[column("compute_s")].c_str(), nullptr) == row["breakdown"]["compute_s"].get<double>());
  }
}

TEST_CASE("counts of zero and sizes out of range: a short message, exit 2") {
  for (const char* command :
       {"predict --cluster dgx-h100 --nodes 1 --seq-len 80k --tp 0",
        "predict --cluster dgx-h100 --nodes 1 --seq-len 80k --cp 0", "sweep --cluster dgx-h100 --seq-len 80k --batch 0",
        "plan --cluster dgx-h100 --nodes 1 --seq-len 80k --gpus-max 0"}) {
    CAPTURE(command);
    auto result = run_treering(command);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("not in range 1 to") != std::string::npos);
    CHECK(result.err.size() < 200);  // was CLI11's PositiveNumber: "0.000000 to 1797693134862315708..." (300 digits)
  }
  auto tokens = run_treering("predict --cluster dgx-h100 --nodes 1 --seq-len 1e30");
  CHECK(tokens.exit_code == 2);
  CHECK(tokens.err.find("more than treering takes") != std::string::npos);
  for (const char* bytes : {"1e30", "1.5"}) {
    CAPTURE(bytes);
    auto result = run_treering(std::string("collective --cluster dgx-h100 --nodes 1 --op allreduce --bytes ") + bytes);
    CHECK(result.exit_code == 2);  // was exit 0: 3.7e18 s for 1e30 B, and 1.5 rounded to 2 B
  }
}

TEST_CASE("a node count that leaves the last NVLink domain partial is run, with a warning that says so") {
  // gb200-nvl72: 18 trays a domain. 20 trays = one full domain and 2 trays of a second; 36 = two full ones.
  auto partial = run_treering("predict --cluster gb200-nvl72 --nodes 20 --seq-len 1M --algo tree");
  CHECK(partial.exit_code == 0);
  CHECK(partial.err.find("warning: node group 'gb200-tray': 20 nodes fill 1 NVLink domain of 18 nodes and leave a "
                         "partial one of 2") != std::string::npos);
  auto full = run_treering("predict --cluster gb200-nvl72 --nodes 36 --seq-len 1M --algo tree");
  CHECK(full.exit_code == 0);
  CHECK(full.err.find("warning") == std::string::npos);
}

TEST_CASE("predict: a case that does not fit in memory is computed and marked, with what it needs, not an error") {
  // llama3.1-70b on one DGX H100 with every GPU holding all the weights (cp 8, no TP): 141.2 GB of bf16 weights
  // per GPU (70.6B x 2 B) on 80 GB GPUs. At tp 8 the weights split 8 ways (17.6 GB) and it fits.
  auto table =
      run_treering("predict --cluster dgx-h100 --nodes 1 --workload llama3.1-70b --seq-len 1k --algo tree,ring");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("no !") != std::string::npos);
  CHECK(table.out.find("! tree at 1000 tokens on 8 GPUs, batch 1 does not fit: it needs") != std::string::npos);
  CHECK(table.out.find("a GPU has 80 GB") != std::string::npos);
  auto json = run_treering(
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-70b --seq-len 1k --algo tree --format json");
  REQUIRE(json.exit_code == 0);
  const auto row = nlohmann::json::parse(json.out)[0];
  CHECK(row["fits"] == 0);
  CHECK(row["peak_memory_bytes"].get<double>() > 80e9);
  CHECK(row["does_not_fit"].get<std::string>().find("weights 141.2 GB") != std::string::npos);
  auto split = run_treering(
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-70b --seq-len 1k --algo tree --tp 8 "
      "--scope step --format json");
  REQUIRE(split.exit_code == 0);
  CHECK(nlohmann::json::parse(split.out)[0]["fits"] == 1);
  CHECK(nlohmann::json::parse(split.out)[0]["does_not_fit"] == "");
  auto step = run_treering(
      "predict --cluster dgx-h100 --nodes 1 --workload llama3.1-70b --seq-len 1k --algo tree "
      "--scope step --format csv");
  REQUIRE(step.exit_code == 0);
  CHECK(step.out.find("the longest context that fits is") != std::string::npos);  // the step's words, in CSV
}
