// treering-realrun decode: runs the plans for real (cpu backend: MPI ranks; cuda: one GPU per MPI rank with NCCL,
// or --loopback P virtual ranks on one GPU), checks every output against the reference, counts the bytes each rank
// sent, and writes JSON with provenance.
#pragma once

#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "treering/model/realrun_plans.hpp"

namespace treering::realrun::app {

struct DecodeOptions {
  model::RealrunBackend backend = model::RealrunBackend::cpu;  // cpu or cuda (--loopback: cuda-loopback)
  std::vector<std::string> algorithms{"tree", "ring"};
  std::string workload = "paper-mha16";
  std::string seq_len = "10000";
  int batch = 0;  // 0: the workload's
  int repeats = 5;
  int warmup = 1;
  std::string cluster = "dgx-h100";  // whose model the plans (and the predicted bytes) come from
  std::string output;                // -o FILE.json; rank 0 writes it
  unsigned long long seed = 7;
  int loopback = 0;               // cuda: P virtual ranks on this rank's one GPU (0: one GPU per MPI rank)
  double timeout_s = 600;         // a GPU step or transfer longer than this aborts the job
  std::vector<std::string> argv;  // for the provenance
};

// Returns the exit code: 0, or 1 when an output is off the reference or the bytes differ from the model's.
int run_decode(const DecodeOptions& options, MpiTransport& transport);

}  // namespace treering::realrun::app
