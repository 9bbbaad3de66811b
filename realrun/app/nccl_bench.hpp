// nccl-tests-style timings of NCCL's own collectives (the cuda backend of `bench allreduce|allgather|sendrecv`):
// one GPU per rank (the node-local rank's), the communicator bootstrapped through MPI, CUDA events around
// each call. Without NCCL in the build, available() says so.
#pragma once

#include <string>
#include <vector>

#include "treering/realrun/bench.hpp"

namespace treering::realrun::app {

bool nccl_available(std::string& why);

// The communicator of all ranks (an ncclComm_t), each rank on its node-local GPU; made on first use.
void* nccl_communicator();
// Ends it (before MPI_Finalize): finalised and destroyed after a clean run, aborted after a failure.
void close_nccl(bool clean);

// This rank's GPU: the node-local rank's, modulo the GPUs there (a no-op without CUDA).
class MpiTransport;
void select_local_gpu(const MpiTransport& transport);

// Per iteration after `warmup`: this rank's seconds for one `op` of `bytes` (the same sizes as the cpu
// backend's time_collective: all-reduce fp32 sum of the buffer, all-gather of bytes / ranks from each, send to
// the next rank and receive from the previous).
std::vector<double> time_nccl(BenchOp op, double bytes, int warmup, int iterations);

}  // namespace treering::realrun::app
