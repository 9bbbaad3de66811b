// treering-realrun bench allreduce|allgather|sendrecv|hbm|attention: nccl-tests-style sweeps on the cpu
// backend (per size the median over iterations after warm-up, the slowest rank's; algbw and busbw by the
// nccl-tests definitions), the host's copy bandwidth, and the partial-attention kernel's time and achieved
// bandwidth. JSON with provenance.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "treering/model/realrun_plans.hpp"
#include "treering/realrun/bench.hpp"

namespace treering::realrun::app {

// What `bench` measures: a collective (allreduce, allgather, sendrecv), the memory's copy bandwidth (hbm) or the
// partial-attention kernel (attention).
enum class BenchKind { allreduce, allgather, sendrecv, hbm, attention };
std::optional<BenchKind> find_bench_kind(const std::string& name);  // nullopt for an unknown name
const char* to_string(BenchKind kind);
// The collective a collective benchmark times; nullopt for hbm and attention.
std::optional<BenchOp> collective_of(BenchKind kind);

struct BenchOptions {
  BenchKind kind = BenchKind::allreduce;  // the command line always names it
  // cpu (MPI rings, host memory, CPU kernel) or cuda (NCCL, the device)
  model::RealrunBackend backend = model::RealrunBackend::cpu;
  std::string sizes = "8:64M";       // collectives: bytes (nccl-tests' K M G: powers of 1024)
  std::string copy_bytes = "256M";   // hbm
  std::string tokens = "1k:64k:x4";  // attention
  std::string workload = "paper-mha16";
  // --for-plan: measure at the sizes these plans use (bench_sizes.hpp) instead of --sizes / --tokens.
  bool for_plan = false;
  std::vector<std::string> algorithms{"tree", "ring"};
  std::string seq_len = "10000";
  int batch = 0;                     // 0: the workload's
  std::string cluster = "dgx-h100";  // whose model makes the plans (as decode --cluster)
  int loopback = 0;                  // collectives on cuda: P virtual ranks on this process's GPU (device copies)
  int iterations = 20;
  int warmup = 5;
  std::string output;
  std::vector<std::string> argv;
};

int run_bench(const BenchOptions& options, MpiTransport& transport);

}  // namespace treering::realrun::app
