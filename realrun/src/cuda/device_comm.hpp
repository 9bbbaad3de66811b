// How the cuda backend's ranks exchange device data: NCCL with one GPU per rank (one MPI rank each), or loopback,
// P virtual ranks as host threads and streams on one GPU (send/recv as device copies handed over with events,
// collectives as rings of them plus a reduce kernel, cut as the cpu backend's rings: so a loopback run sends
// exactly the bytes the model's plan says, and the program can check them). Everything is stream-ordered: no call
// here waits on the host for the device. Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace treering::realrun::detail {
class LoopbackHub;
}

namespace treering::realrun::cuda::detail {

enum class Reduce { max, sum };

class DeviceComm {
 public:
  virtual ~DeviceComm() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Sends and receives between group_start and group_end proceed together (as ncclGroupStart/End), on `stream`.
  virtual void group_start() = 0;
  virtual void send(const void* data, std::size_t bytes, int to, cudaStream_t stream) = 0;
  virtual void recv(void* data, std::size_t bytes, int from, cudaStream_t stream) = 0;
  virtual void group_end() = 0;
  virtual void allreduce(float* values, std::size_t count, Reduce op, cudaStream_t stream) = 0;
  // Every rank's `count` floats into `all`, rank by rank.
  virtual void allgather(const float* mine, float* all, std::size_t count, cudaStream_t stream) = 0;
  virtual void barrier() = 0;  // host barrier of the ranks (before the clock)
  // The bytes this rank sent since the last call, and whether they include the collectives' (loopback: yes;
  // NCCL: its collectives move bytes the program cannot see).
  virtual double take_bytes_sent() = 0;
  virtual bool collective_bytes_observed() const = 0;
};

// `comm`: an ncclComm_t of the plan's ranks, or nullptr for one rank. `barrier`: the ranks' host barrier (MPI's).
std::unique_ptr<DeviceComm> nccl_comm(void* comm, int rank, int ranks, std::function<void()> barrier);
// Virtual rank `rank` of hub.ranks() on the current device.
std::unique_ptr<DeviceComm> loopback_comm(realrun::detail::LoopbackHub& hub, int rank);

}  // namespace treering::realrun::cuda::detail
