// `treering sweep`: the cases in their documented order, worker processes giving the same file, and the errors.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

using treering::cli::testing::read_file;
using treering::cli::testing::run_treering;

TEST_CASE("sweep: one row per case, nodes slowest and engine fastest") {
  // 2 node counts x 2 batches x 2 lengths x 2 algorithms x 2 engines = 32 rows.
  const auto result = run_treering(
      "sweep --cluster dgx-h100 --nodes 1,2 --batch 1,8 --seq-len 80k,160k --algo ring,tree "
      "--engine model,sim --format json");
  REQUIRE(result.exit_code == 0);
  const auto rows = nlohmann::json::parse(result.out);
  REQUIRE(rows.size() == 32);
  CHECK(rows[0]["gpus"] == 8);
  CHECK(rows[0]["batch"] == 1);
  CHECK(rows[0]["seq_len"] == 80000);
  CHECK(rows[0]["algo"] == "ring");
  CHECK(rows[0]["engine"] == "model");
  CHECK(rows[1]["engine"] == "sim");
  CHECK(rows[2]["algo"] == "tree");
  CHECK(rows[4]["seq_len"] == 160000);
  CHECK(rows[8]["batch"] == 8);
  CHECK(rows[16]["gpus"] == 16);
  // Each model row's model_latency_s is its own latency; a simulated row's is the model's figure beside it.
  CHECK(rows[0]["model_latency_s"] == rows[0]["latency_s"]);
  CHECK(rows[1]["model_latency_s"] == rows[0]["latency_s"]);
}

TEST_CASE("sweep --jobs 2 writes the file one process writes") {
  const std::string dir = std::string(TREERING_BINARY_DIR) + "/tests/";
  const std::string axes = "sweep --cluster dgx-h100 --nodes 1,2 --seq-len 80k:640k:x2 --engine model,sim -o ";
  REQUIRE(run_treering(axes + dir + "sweep-serial.csv").exit_code == 0);
  REQUIRE(run_treering(axes + dir + "sweep-threads.csv --jobs 2").exit_code == 0);
  const std::string serial = read_file(dir + "sweep-serial.csv");
  CHECK(serial.rfind("algo,engine,cluster,nodes,gpus,workload,batch,seq_len,latency_s,", 0) == 0);
  CHECK(std::count(serial.begin(), serial.end(), '\n') == 1 + 2 * 4 * 5 * 2);  // header + 2 x 4 x 5 x 2 cases
  CHECK(serial == read_file(dir + "sweep-threads.csv"));
}

TEST_CASE("sweep: bad axes and outputs are errors with exit code 2") {
  CHECK(run_treering("sweep --cluster dgx-h100 --seq-len 80k --engine magic").exit_code == 2);
  CHECK(run_treering("sweep --cluster dgx-h100 --seq-len 80k --workload nope").exit_code == 2);
  const auto result = run_treering("sweep --cluster dgx-h100 --seq-len 80k -o rows.txt");
  CHECK(result.exit_code == 2);
  CHECK(result.err.find(".csv or .json") != std::string::npos);
}

namespace {

// Runs the command as rank RANK of SIZE, as Open MPI's mpirun would start it (its environment, no launch id).
treering::cli::testing::CliResult as_rank(int rank, int size, const std::string& arguments) {
  ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", std::to_string(size).c_str(), 1);
  for (const char* id : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "SLURM_JOB_ID"})
    ::unsetenv(id);
  auto result = run_treering(arguments);
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  return result;
}

}  // namespace

TEST_CASE("sweep ranks meet by launch id: stale parts are not read, a missing rank times out, no id is refused") {
  const std::string out = std::string(TREERING_BINARY_DIR) + "/tests/sweep-rendezvous.csv";
  const std::string sweep = "sweep --cluster dgx-h100 --seq-len 80k --algo tree,ring -o " + out;
  // A part left by an aborted earlier launch (id "old") where this launch's rank 1 would put its own.
  std::ofstream(out + ".part-1-of-2.old") << "3:bad";
  auto waited = as_rank(0, 2, sweep + " --launch-id new --rank-timeout 0.5");
  CHECK(waited.exit_code != 0);
  CHECK(waited.err.find("rank 0 waited 0.5 s (--rank-timeout) for ranks 1 of launch new") != std::string::npos);
  // Rank 1 of launch "new" writes its part (its cases: every second one); rank 0 then joins both.
  REQUIRE(as_rank(1, 2, sweep + " --launch-id new").exit_code == 0);
  auto joined = as_rank(0, 2, sweep + " --launch-id new --rank-timeout 60");
  CHECK(joined.exit_code == 0);
  CHECK(joined.err.find("wrote 2 rows to " + out + " (2 ranks)") != std::string::npos);
  CHECK(std::ifstream(out + ".part-1-of-2.old").good());  // another launch's file: neither read nor removed
  // Without a launcher's id and without --launch-id, ranks could not tell this run's parts from an earlier one's.
  auto anonymous = as_rank(1, 2, sweep);
  CHECK(anonymous.exit_code == 2);
  CHECK(anonymous.err.find("--launch-id") != std::string::npos);
  std::remove((out + ".part-1-of-2.old").c_str());
}
