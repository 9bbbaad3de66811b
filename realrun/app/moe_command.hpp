// treering-realrun moe: an MoE layer with expert parallelism over the MPI ranks (moe_run.hpp): routing, dispatch,
// experts, combine, checked against the one-rank reference; per-rank figures as a table or JSON (rank 0).
#pragma once

#include <optional>
#include <string>

#include "mpi_transport.hpp"
#include "treering/model/realrun_plans.hpp"

namespace treering::realrun::app {

struct MoeOptions {
  model::RealrunBackend backend = model::RealrunBackend::cpu;  // cpu only
  std::string workload = "deepseek-v2-lite";
  int batch = 16;  // tokens per rank
  std::optional<int> hidden;
  std::optional<int> intermediate;
  unsigned long long seed = 7;
  std::string format = "table";  // table | json
};

// What a moe run on another backend is told.
inline constexpr const char* kMoeNeedsCpu = "moe runs on the cpu backend (the GPU dispatch and combine are not built)";

// Returns the exit code: 0; 1 when a rank's layer differs from the reference; 2 for bad input.
int run_moe(const MoeOptions& options, MpiTransport& transport);

}  // namespace treering::realrun::app
