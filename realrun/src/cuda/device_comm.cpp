#include "device_comm.hpp"

#include <nccl.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../loopback_hub.hpp"
#include "../ring_collectives.hpp"
#include "decode_kernels.hpp"

namespace treering::realrun::cuda::detail {
namespace {

using realrun::detail::LoopbackHub;
using realrun::detail::ring_chunk;
using realrun::detail::ring_wrap;
using realrun::detail::RingChunk;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

class NcclComm : public DeviceComm {
 public:
  NcclComm(void* comm, int rank, int ranks, std::function<void()> barrier)
      : comm_(static_cast<ncclComm_t>(comm)), rank_(rank), ranks_(ranks), barrier_(std::move(barrier)) {}
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  void group_start() override { check(ncclGroupStart(), "ncclGroupStart"); }
  void send(const void* data, std::size_t bytes, int to, cudaStream_t stream) override {
    bytes_ += static_cast<double>(bytes);
    check(ncclSend(data, bytes, ncclUint8, to, comm_, stream), "ncclSend");
  }
  void recv(void* data, std::size_t bytes, int from, cudaStream_t stream) override {
    check(ncclRecv(data, bytes, ncclUint8, from, comm_, stream), "ncclRecv");
  }
  void group_end() override { check(ncclGroupEnd(), "ncclGroupEnd"); }
  void allreduce(float* values, std::size_t count, Reduce op, cudaStream_t stream) override {
    if (ranks_ == 1) return;  // nothing to reduce (and no communicator)
    check(ncclAllReduce(values, values, count, ncclFloat, op == Reduce::max ? ncclMax : ncclSum, comm_, stream), "ncclAllReduce");
  }
  void allgather(const float* mine, float* all, std::size_t count, cudaStream_t stream) override {
    if (ranks_ == 1) {
      check(cudaMemcpyAsync(all, mine, count * sizeof(float), cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    } else {
      check(ncclAllGather(mine, all, count, ncclFloat, comm_, stream), "ncclAllGather");
    }
  }
  void barrier() override {
    if (barrier_) barrier_();
  }
  double take_bytes_sent() override { return std::exchange(bytes_, 0.0); }
  bool collective_bytes_observed() const override { return false; }

 private:
  ncclComm_t comm_;
  int rank_, ranks_;
  std::function<void()> barrier_;
  double bytes_ = 0;
};

struct Event {  // a timing-free event handed to the peer; the side that waits for it destroys it (after enqueuing the wait)
  cudaEvent_t handle = nullptr;
  Event() { check(cudaEventCreateWithFlags(&handle, cudaEventDisableTiming), "cudaEventCreate"); }
};

class LoopbackComm : public DeviceComm {
 public:
  LoopbackComm(LoopbackHub& hub, int rank) : hub_(hub), rank_(rank) {}
  ~LoopbackComm() override { cudaFree(scratch_); }
  int rank() const override { return rank_; }
  int ranks() const override { return hub_.ranks(); }
  void group_start() override {
    sends_.clear();
    recvs_.clear();
  }
  void send(const void* data, std::size_t bytes, int to, cudaStream_t stream) override { sends_.push_back({data, bytes, to, stream}); }
  void recv(void* data, std::size_t bytes, int from, cudaStream_t stream) override { recvs_.push_back({data, bytes, from, stream}); }
  // Every send posted before any wait (so no pattern of a group can deadlock); each receive waits for its data's
  // event, copies on its own stream and hands back the copy's event, which the sender's stream waits for.
  void group_end() override {
    for (const Op& s : sends_) {
      const Event ready;
      check(cudaEventRecord(ready.handle, s.stream), "cudaEventRecord");
      hub_.post_send(rank_, s.peer, {s.data, s.bytes, ready.handle});
      bytes_ += static_cast<double>(s.bytes);
    }
    for (const Op& r : recvs_) {
      const LoopbackHub::Posting posting = hub_.take_send(r.peer, rank_);
      if (posting.bytes != r.bytes) {
        throw std::runtime_error("loopback: virtual rank " + std::to_string(rank_) + " expected " + std::to_string(r.bytes) +
                                 " B from virtual rank " + std::to_string(r.peer) + ", which sent " + std::to_string(posting.bytes) + " B");
      }
      const auto ready = static_cast<cudaEvent_t>(posting.event);
      check(cudaStreamWaitEvent(r.stream, ready, 0), "cudaStreamWaitEvent");
      cudaEventDestroy(ready);  // the wait keeps what it needs
      if (r.bytes > 0) check(cudaMemcpyAsync(const_cast<void*>(r.data), posting.data, r.bytes, cudaMemcpyDeviceToDevice, r.stream), "cudaMemcpyAsync");
      const Event done;
      check(cudaEventRecord(done.handle, r.stream), "cudaEventRecord");
      hub_.post_done(r.peer, rank_, done.handle);
    }
    for (const Op& s : sends_) {
      const auto done = static_cast<cudaEvent_t>(hub_.take_done(rank_, s.peer));
      check(cudaStreamWaitEvent(s.stream, done, 0), "cudaStreamWaitEvent");
      cudaEventDestroy(done);
    }
    sends_.clear();
    recvs_.clear();
  }
  // The cpu backend's ring (ring_collectives.cpp), step by step: reduce-scatter, then all-gather of the owned chunks.
  void allreduce(float* values, std::size_t count, Reduce op, cudaStream_t stream) override {
    const int n = ranks(), r = rank_;
    if (n < 2) return;
    float* incoming = scratch(count / static_cast<std::size_t>(n) + 1);
    for (int step = 0; step < n - 1; ++step) {
      const RingChunk out = ring_chunk(count, n, ring_wrap(r - step, n)), in = ring_chunk(count, n, ring_wrap(r - step - 1, n));
      exchange(values + out.first, out.count, incoming, in.count, stream);
      reduce_into(values + in.first, incoming, in.count, op == Reduce::max, stream);
    }
    for (int step = 0; step < n - 1; ++step) {
      const RingChunk out = ring_chunk(count, n, ring_wrap(r + 1 - step, n)), in = ring_chunk(count, n, ring_wrap(r - step, n));
      exchange(values + out.first, out.count, values + in.first, in.count, stream);
    }
  }
  void allgather(const float* mine, float* all, std::size_t count, cudaStream_t stream) override {
    const int n = ranks(), r = rank_;
    check(cudaMemcpyAsync(all + static_cast<std::size_t>(r) * count, mine, count * sizeof(float), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync");
    for (int step = 0; step < n - 1; ++step) {
      exchange(all + static_cast<std::size_t>(ring_wrap(r - step, n)) * count, count,
               all + static_cast<std::size_t>(ring_wrap(r - step - 1, n)) * count, count, stream);
    }
  }
  void barrier() override { hub_.barrier(rank_); }
  double take_bytes_sent() override { return std::exchange(bytes_, 0.0); }
  bool collective_bytes_observed() const override { return true; }

 private:
  struct Op {
    const void* data;
    std::size_t bytes;
    int peer;
    cudaStream_t stream;
  };
  // One ring step: `out` floats to the next rank, `in` floats from the previous one.
  void exchange(const float* out, std::size_t out_count, float* in, std::size_t in_count, cudaStream_t stream) {
    const int n = ranks();
    group_start();
    send(out, out_count * sizeof(float), (rank_ + 1) % n, stream);
    recv(in, in_count * sizeof(float), (rank_ + n - 1) % n, stream);
    group_end();
  }
  float* scratch(std::size_t floats) {  // grown on the first (warm-up) run, then kept
    if (floats > scratch_floats_) {
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      cudaFree(scratch_);
      scratch_ = nullptr;
      check(cudaMalloc(reinterpret_cast<void**>(&scratch_), floats * sizeof(float)), "cudaMalloc");
      scratch_floats_ = floats;
    }
    return scratch_;
  }
  LoopbackHub& hub_;
  int rank_;
  std::vector<Op> sends_, recvs_;
  float* scratch_ = nullptr;
  std::size_t scratch_floats_ = 0;
  double bytes_ = 0;
};

}  // namespace

std::unique_ptr<DeviceComm> nccl_comm(void* comm, int rank, int ranks, std::function<void()> barrier) {
  return std::make_unique<NcclComm>(comm, rank, ranks, std::move(barrier));
}

std::unique_ptr<DeviceComm> loopback_comm(LoopbackHub& hub, int rank) { return std::make_unique<LoopbackComm>(hub, rank); }

}  // namespace treering::realrun::cuda::detail
