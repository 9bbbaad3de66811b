// How the ranks a process runs exchange device data during a decode step, all of it enqueued by one host thread
// and ordered on the device (so a step can be captured in a CUDA graph):
//  - NCCL: one rank per process (one GPU each); sends and receives are ncclSend/ncclRecv in a group, collectives
//    NCCL's own (it picks the algorithm and protocol; their bytes are not seen by the program).
//  - Loopback: P virtual ranks on ONE GPU, each with its own streams. A send is a device copy on the receiver's
//    stream, ordered by events: the receiver waits for the sender's data, the sender for the copy before it reuses
//    its buffer. Collectives are rings of such copies plus a reduce kernel, cut as the cpu backend's rings, so every
//    byte is counted and equals the model's plan, rank by rank.
// Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace treering::realrun::cuda::detail {

enum class Reduce { max, sum };

// One rank's part of an exchange: `rank` sends `bytes` of `data` to `peer`, or receives them from `peer` into `data`.
struct PointOp {
  int rank = 0;
  bool send = true;
  int peer = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
  cudaStream_t stream = nullptr;
};

// One rank's buffer in a collective: `data` on `stream`.
struct RankBuffer {
  int rank = 0;
  float* data = nullptr;
  cudaStream_t stream = nullptr;
};

class Fabric {
 public:
  virtual ~Fabric() = default;
  virtual int ranks() const = 0;
  // The ranks this process runs (NCCL: its own; loopback: all).
  virtual std::vector<int> local_ranks() const = 0;
  // All sends and receives of a group at once (as ncclGroupStart/End): no order of them can deadlock.
  virtual void exchange(const std::vector<PointOp>& ops) = 0;
  // In place over every local rank's buffer (`count` floats each).
  virtual void allreduce(const std::vector<RankBuffer>& buffers, std::size_t count, Reduce op) = 0;
  // Every rank's `count` floats (mine[i].data) into all[i], rank by rank.
  virtual void allgather(const std::vector<RankBuffer>& mine, const std::vector<float*>& all, std::size_t count) = 0;
  // Before the clock: the ranks' devices meet (NCCL: a one-float all-reduce on `stream`; loopback: nothing to meet).
  virtual void device_barrier(cudaStream_t stream) = 0;
  // Bytes rank `rank` sent since the last call; whether they include the collectives' (NCCL: no).
  virtual double take_bytes_sent(int rank) = 0;
  virtual bool collective_bytes_observed() const = 0;
  // Scratch for the loopback rings, `floats` per rank: made before any step (none is made during one).
  virtual void reserve(std::size_t floats) = 0;
};

// `comm`: an ncclComm_t of `ranks` ranks, this one `rank` (nullptr for one rank).
std::unique_ptr<Fabric> nccl_fabric(void* comm, int rank, int ranks);
// `ranks` virtual ranks on the current device.
std::unique_ptr<Fabric> loopback_fabric(int ranks);

}  // namespace treering::realrun::cuda::detail
