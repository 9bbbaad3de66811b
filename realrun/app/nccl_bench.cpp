#include "nccl_bench.hpp"

#include "mpi_transport.hpp"
#include "treering/realrun/bench.hpp"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <vector>
#include <memory>
#include <stdexcept>

namespace treering::realrun::app {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

int node_local_rank() {
  int rank = 0, local_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  return local_rank;
}

void select_gpu() {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check(cudaSetDevice(node_local_rank() % devices), "cudaSetDevice");
}

// The communicator of all ranks, each on its node-local GPU; made on first use, ended by close_nccl.
struct Communicator {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0, ranks = 1;
  Communicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    select_gpu();
    ncclUniqueId id;
    if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    check(ncclCommInitRank(&comm, ranks, id, rank),
          "ncclCommInitRank (one GPU per rank: no more ranks per node than GPUs)");
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
  }
};

std::unique_ptr<Communicator>& the_communicator() {
  static std::unique_ptr<Communicator> instance;
  return instance;
}

Communicator& communicator() {
  if (!the_communicator()) the_communicator() = std::make_unique<Communicator>();
  return *the_communicator();
}

}  // namespace

void* nccl_communicator() { return communicator().comm; }

void close_nccl(bool clean) {
  std::unique_ptr<Communicator>& c = the_communicator();
  if (!c) return;
  cudaStreamDestroy(c->stream);
  if (clean && ncclCommFinalize(c->comm) == ncclSuccess)
    ncclCommDestroy(c->comm);
  else
    ncclCommAbort(c->comm);
  c.reset();
}

void select_local_gpu(const MpiTransport&) { select_gpu(); }

bool nccl_available(std::string& why) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    why = std::string("no usable CUDA device") +
          (status != cudaSuccess ? std::string(": ") + cudaGetErrorString(status) : "");
    return false;
  }
  return true;
}

std::vector<double> time_nccl(BenchOp op, double bytes, int warmup, int iterations) {
  Communicator& c = communicator();
  const auto floats = static_cast<size_t>(std::max(1.0, bytes / 4));
  const size_t per_rank = std::max<size_t>(1, floats / static_cast<size_t>(c.ranks));
  float *send = nullptr, *receive = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&send), floats * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&receive),
                   std::max(floats, per_rank * static_cast<size_t>(c.ranks)) * sizeof(float)),
        "cudaMalloc");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  auto launch = [&] {
    switch (op) {
      case BenchOp::allreduce:
        check(ncclAllReduce(send, receive, floats, ncclFloat, ncclSum, c.comm, c.stream), "ncclAllReduce");
        break;
      case BenchOp::allgather:
        check(ncclAllGather(send, receive, per_rank, ncclFloat, c.comm, c.stream), "ncclAllGather");
        break;
      case BenchOp::sendrecv:
        check(ncclGroupStart(), "ncclGroupStart");
        check(ncclSend(send, floats, ncclFloat, (c.rank + 1) % c.ranks, c.comm, c.stream), "ncclSend");
        check(ncclRecv(receive, floats, ncclFloat, (c.rank + c.ranks - 1) % c.ranks, c.comm, c.stream), "ncclRecv");
        check(ncclGroupEnd(), "ncclGroupEnd");
        break;
    }
  };
  // N calls back to back between one pair of events (as nccl-tests): N from one call timed alone, the same on every
  // rank (the slowest rank's estimate), enough for a millisecond per sample.
  auto timed = [&](int calls) {
    MPI_Barrier(MPI_COMM_WORLD);
    check(cudaEventRecord(start, c.stream), "cudaEventRecord");
    for (int i = 0; i < calls; ++i) launch();
    check(cudaEventRecord(stop, c.stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
    return milliseconds * 1e-3 / calls;
  };
  for (int i = 0; i < std::max(1, warmup); ++i) timed(1);
  double estimate_s = timed(1);
  MPI_Allreduce(MPI_IN_PLACE, &estimate_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int calls = plan_gpu_timing(std::max(1.0, bytes), 0, 0, estimate_s).calls_per_sample;
  std::vector<double> seconds;
  for (int i = 0; i < iterations; ++i) seconds.push_back(timed(calls));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(send);
  cudaFree(receive);
  return seconds;
}

}  // namespace treering::realrun::app
