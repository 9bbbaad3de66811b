#include "treering/analysis/sweep_ranks.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "treering/topologies/output_file.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {
namespace {

const char* environment(const char* name) { return std::getenv(name); }

// The first of these pairs the launcher set: {rank, size}.
std::pair<int, int> launched_rank() {
  const std::pair<const char*, const char*> pairs[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                       {"PMI_RANK", "PMI_SIZE"},
                                                       {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"}};
  for (const auto& [rank, size] : pairs) {
    if (environment(rank) && environment(size)) return {std::atoi(environment(rank)), std::atoi(environment(size))};
  }
  return {0, 1};
}

std::string launched_job() {
  if (const char* pmix = environment("PMIX_NAMESPACE")) return pmix;
  if (const char* ompi = environment("OMPI_MCA_ess_base_jobid")) return ompi;  // Open MPI 4 and 5
  if (const char* orte = environment("OMPI_MCA_orte_ess_jobid")) return orte;  // Open MPI 3
  if (environment("SLURM_JOB_ID") && environment("SLURM_STEP_ID")) {
    return std::string(environment("SLURM_JOB_ID")) + "." + environment("SLURM_STEP_ID");
  }
  return "";
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Pieces as "LENGTH:BYTES" one after another.
std::string pack(const std::vector<std::string>& pieces) {
  std::string packed;
  for (const std::string& piece : pieces) packed += std::to_string(piece.size()) + ':' + piece;
  return packed;
}

std::vector<std::string> unpack(const std::string& packed, const std::string& path) {
  std::vector<std::string> pieces;
  for (std::size_t at = 0; at < packed.size();) {
    const std::size_t colon = packed.find(':', at);
    if (colon == std::string::npos) throw std::runtime_error(path + ": a truncated part");
    const std::size_t bytes = std::stoull(packed.substr(at, colon - at));
    if (colon + 1 + bytes > packed.size()) throw std::runtime_error(path + ": a truncated part");
    pieces.push_back(packed.substr(colon + 1, bytes));
    at = colon + 1 + bytes;
  }
  return pieces;
}

}  // namespace

SweepRanks::SweepRanks(std::string output, RendezvousOptions options)
    : output_(std::move(output)),
      job_(options.launch_id.empty() ? launched_job() : options.launch_id),
      timeout_s_(options.timeout_s) {
  std::tie(rank_, size_) = launched_rank();
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    throw std::runtime_error("the launcher's rank and size do not make sense");
  if (size_ > 1 && output_.empty())
    throw topologies::InputError("under mpirun or srun, write the sweep to a file: -o FILE.csv|FILE.json");
  if (size_ > 1 && job_.empty()) {
    throw topologies::InputError(
        "the launcher gives no launch id: pass every rank the same --launch-id ID (e.g. the date and time), "
        "so that the parts of an earlier run are not read as this one's");
  }
  if (job_.find('/') != std::string::npos)
    throw topologies::InputError("--launch-id: no '/' in the id, got '" + job_ + "'");
  if (!(timeout_s_ > 0)) throw topologies::InputError("--rank-timeout must be positive");
}

std::string SweepRanks::part_path(int rank) const {
  return output_ + ".part-" + std::to_string(rank) + "-of-" + std::to_string(size_) + "." + job_;
}

std::string SweepRanks::missing_ranks_message(int first_missing) const {
  std::string missing;
  for (int rank = first_missing; rank < size_; ++rank) {
    if (!exists(part_path(rank))) missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  }
  char waited[32];
  std::snprintf(waited, sizeof waited, "%g s", timeout_s_);
  return "rank 0 waited " + std::string(waited) + " (--rank-timeout) for ranks " + missing + " of launch " + job_ +
         " (their parts " + part_path(first_missing) + ", ...): did they die, or run another launch id?";
}

void SweepRanks::report_failure(const std::string& message) const {
  if (size_ > 1 && rank_ != 0) topologies::write_output_file(part_path(rank_) + ".failed", message);
}

std::vector<std::vector<std::string>> SweepRanks::gather(const std::vector<std::string>& mine) const {
  if (size_ == 1) return {mine};
  if (rank_ != 0) {
    topologies::write_output_file(part_path(rank_), pack(mine));
    return {};
  }
  std::vector<std::vector<std::string>> pieces{mine};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  for (int rank = 1; rank < size_; ++rank) {
    const std::string path = part_path(rank);
    while (!exists(path)) {
      if (exists(path + ".failed")) {
        const std::string message = read_whole(path + ".failed");
        std::remove((path + ".failed").c_str());
        throw std::runtime_error("rank " + std::to_string(rank) + ": " + message);
      }
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error(missing_ranks_message(rank));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pieces.push_back(unpack(read_whole(path), path));
    std::remove(path.c_str());
  }
  return pieces;
}

}  // namespace treering::analysis
