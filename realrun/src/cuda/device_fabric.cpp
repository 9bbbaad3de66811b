// device_fabric.hpp's two fabrics. Nothing here waits on the host for the device: every order is an event or a
// stream's own order, so one host thread enqueues all ranks' work and a step can be captured in a graph.
#include "device_fabric.hpp"

#include <nccl.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "../ring_collectives.hpp"
#include "decode_kernels.hpp"
#include "device_memory.hpp"

namespace treering::realrun::cuda::detail {
namespace {

using realrun::detail::ring_chunk;
using realrun::detail::ring_wrap;
using realrun::detail::RingChunk;

using detail::check;
void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

class NcclFabric : public Fabric {
 public:
  NcclFabric(void* comm, int rank, int ranks) : comm_(static_cast<ncclComm_t>(comm)), rank_(rank), ranks_(ranks) {
    check(cudaMalloc(reinterpret_cast<void**>(&token_), sizeof(float)), "cudaMalloc");
    check(cudaMemset(token_, 0, sizeof(float)), "cudaMemset");
  }
  ~NcclFabric() override { cudaFree(token_); }
  int ranks() const override { return ranks_; }
  std::vector<int> local_ranks() const override { return {rank_}; }
  void exchange(const std::vector<PointOp>& ops) override {
    if (ops.empty()) return;
    check(ncclGroupStart(), "ncclGroupStart");
    for (const PointOp& op : ops) {
      if (op.send) {
        bytes_ += static_cast<double>(op.bytes);
        check(ncclSend(op.data, op.bytes, ncclUint8, op.peer, comm_, op.stream), "ncclSend");
      } else {
        check(ncclRecv(op.data, op.bytes, ncclUint8, op.peer, comm_, op.stream), "ncclRecv");
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }
  void allreduce(const std::vector<RankBuffer>& buffers, std::size_t count, Reduce op) override {
    if (ranks_ == 1) return;  // nothing to reduce (and no communicator)
    for (const RankBuffer& b : buffers) {
      check(ncclAllReduce(b.data, b.data, count, ncclFloat, op == Reduce::max ? ncclMax : ncclSum, comm_, b.stream),
            "ncclAllReduce");
    }
  }
  void allgather(const std::vector<RankBuffer>& mine, const std::vector<float*>& all, std::size_t count) override {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (ranks_ == 1) {
        check(cudaMemcpyAsync(all[i], mine[i].data, count * sizeof(float), cudaMemcpyDeviceToDevice, mine[i].stream),
              "cudaMemcpyAsync");
      } else {
        check(ncclAllGather(mine[i].data, all[i], count, ncclFloat, comm_, mine[i].stream), "ncclAllGather");
      }
    }
  }
  void device_barrier(cudaStream_t stream) override {
    if (ranks_ > 1)
      check(ncclAllReduce(token_, token_, 1, ncclFloat, ncclSum, comm_, stream), "ncclAllReduce (barrier)");
  }
  double take_bytes_sent(int) override { return std::exchange(bytes_, 0.0); }
  bool collective_bytes_observed() const override { return ranks_ == 1; }
  void reserve(std::size_t) override {}

 private:
  ncclComm_t comm_;
  int rank_, ranks_;
  float* token_ = nullptr;
  double bytes_ = 0;
};

class LoopbackFabric : public Fabric {
 public:
  explicit LoopbackFabric(int ranks)
      : ranks_(ranks),
        bytes_(static_cast<std::size_t>(ranks), 0.0),
        scratch_(static_cast<std::size_t>(ranks), nullptr) {}
  ~LoopbackFabric() override {
    for (float* s : scratch_) cudaFree(s);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  int ranks() const override { return ranks_; }
  std::vector<int> local_ranks() const override {
    std::vector<int> all(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) all[static_cast<std::size_t>(r)] = r;
    return all;
  }
  // Every send's data-ready event first; then each receive (matched to the oldest unmatched send of its pair) waits
  // for it and copies on the receiver's stream; then every sender's stream waits for its copies before going on.
  void exchange(const std::vector<PointOp>& ops) override {
    struct Posted {
      const PointOp* send;
      cudaEvent_t ready;
      bool taken;
    };
    std::vector<Posted> posted;
    used_ = 0;  // every wait on the pool's events was enqueued by the last exchange: they can be recorded again
    for (const PointOp& op : ops) {
      if (!op.send) continue;
      posted.push_back({&op, next_event(op.stream), false});
      check(cudaEventRecord(posted.back().ready, op.stream), "cudaEventRecord");
      bytes_[static_cast<std::size_t>(op.rank)] += static_cast<double>(op.bytes);
    }
    std::vector<std::pair<cudaStream_t, cudaEvent_t>> copied;  // (the sender's stream, its copy's end)
    for (const PointOp& op : ops) {
      if (op.send) continue;
      Posted* match = nullptr;
      for (Posted& p : posted) {
        if (!p.taken && p.send->rank == op.peer && p.send->peer == op.rank) {
          match = &p;
          break;
        }
      }
      if (match == nullptr)
        throw std::runtime_error("loopback: virtual rank " + std::to_string(op.rank) + " receives from " +
                                 std::to_string(op.peer) + ", which sends nothing to it");
      if (match->send->bytes != op.bytes) {
        throw std::runtime_error("loopback: virtual rank " + std::to_string(op.rank) + " expected " +
                                 std::to_string(op.bytes) + " B from virtual rank " + std::to_string(op.peer) +
                                 ", which sent " + std::to_string(match->send->bytes) + " B");
      }
      match->taken = true;
      check(cudaStreamWaitEvent(op.stream, match->ready, 0), "cudaStreamWaitEvent");
      if (op.bytes > 0)
        check(cudaMemcpyAsync(op.data, match->send->data, op.bytes, cudaMemcpyDeviceToDevice, op.stream),
              "cudaMemcpyAsync");
      const cudaEvent_t done = next_event(op.stream);
      check(cudaEventRecord(done, op.stream), "cudaEventRecord");
      copied.emplace_back(match->send->stream, done);
    }
    for (const Posted& p : posted) {
      if (!p.taken)
        throw std::runtime_error("loopback: virtual rank " + std::to_string(p.send->rank) + " sends to " +
                                 std::to_string(p.send->peer) + ", which receives nothing");
    }
    for (const auto& [stream, done] : copied) check(cudaStreamWaitEvent(stream, done, 0), "cudaStreamWaitEvent");
  }
  // The cpu backend's ring (ring_collectives.cpp), step by step for every rank at once: reduce-scatter, all-gather.
  void allreduce(const std::vector<RankBuffer>& buffers, std::size_t count, Reduce op) override {
    const int n = ranks_;
    if (n < 2) return;
    for (int step = 0; step < n - 1; ++step) {
      std::vector<PointOp> ops;
      for (const RankBuffer& b : buffers) {
        const RingChunk out = ring_chunk(count, n, ring_wrap(b.rank - step, n)),
                        in = ring_chunk(count, n, ring_wrap(b.rank - step - 1, n));
        ops.push_back({b.rank, true, (b.rank + 1) % n, b.data + out.first, out.count * sizeof(float), b.stream});
        ops.push_back({b.rank, false, (b.rank + n - 1) % n, scratch_[static_cast<std::size_t>(b.rank)],
                       in.count * sizeof(float), b.stream});
      }
      exchange(ops);
      for (const RankBuffer& b : buffers) {
        const RingChunk in = ring_chunk(count, n, ring_wrap(b.rank - step - 1, n));
        reduce_into(b.data + in.first, scratch_[static_cast<std::size_t>(b.rank)], in.count, op == Reduce::max,
                    b.stream);
      }
    }
    for (int step = 0; step < n - 1; ++step) {
      std::vector<PointOp> ops;
      for (const RankBuffer& b : buffers) {
        const RingChunk out = ring_chunk(count, n, ring_wrap(b.rank + 1 - step, n)),
                        in = ring_chunk(count, n, ring_wrap(b.rank - step, n));
        ops.push_back({b.rank, true, (b.rank + 1) % n, b.data + out.first, out.count * sizeof(float), b.stream});
        ops.push_back({b.rank, false, (b.rank + n - 1) % n, b.data + in.first, in.count * sizeof(float), b.stream});
      }
      exchange(ops);
    }
  }
  void allgather(const std::vector<RankBuffer>& mine, const std::vector<float*>& all, std::size_t count) override {
    const int n = ranks_;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      check(cudaMemcpyAsync(all[i] + static_cast<std::size_t>(mine[i].rank) * count, mine[i].data,
                            count * sizeof(float), cudaMemcpyDeviceToDevice, mine[i].stream),
            "cudaMemcpyAsync");
    }
    for (int step = 0; step < n - 1; ++step) {
      std::vector<PointOp> ops;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const int r = mine[i].rank;
        ops.push_back({r, true, (r + 1) % n, all[i] + static_cast<std::size_t>(ring_wrap(r - step, n)) * count,
                       count * sizeof(float), mine[i].stream});
        ops.push_back({r, false, (r + n - 1) % n, all[i] + static_cast<std::size_t>(ring_wrap(r - step - 1, n)) * count,
                       count * sizeof(float), mine[i].stream});
      }
      exchange(ops);
    }
  }
  void device_barrier(cudaStream_t) override {}
  double take_bytes_sent(int rank) override { return std::exchange(bytes_.at(static_cast<std::size_t>(rank)), 0.0); }
  bool collective_bytes_observed() const override { return true; }
  void reserve(std::size_t floats) override {
    if (floats <= scratch_floats_) return;
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (float*& s : scratch_) {
      cudaFree(s);
      s = nullptr;
      check(cudaMalloc(reinterpret_cast<void**>(&s), floats * sizeof(float)), "cudaMalloc");
    }
    scratch_floats_ = floats;
  }

 private:
  // A wait refers to the event's record before it (CUDA's rule), so events are reused exchange after exchange; the
  // pool grows to the largest exchange in the warm-up step.
  cudaEvent_t next_event(cudaStream_t stream) {
    if (used_ == events_.size()) {
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      check(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
      if (capturing != cudaStreamCaptureStatusNone) {
        throw std::logic_error(
            "loopback: an exchange larger than the warm-up step's inside a graph capture (events are made in the "
            "warm-up)");
      }
      cudaEvent_t event = nullptr;
      check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
      events_.push_back(event);
    }
    return events_[used_++];
  }
  int ranks_;
  std::vector<double> bytes_;
  std::vector<float*> scratch_;
  std::size_t scratch_floats_ = 0;
  std::vector<cudaEvent_t> events_;
  std::size_t used_ = 0;
};

}  // namespace

std::unique_ptr<Fabric> nccl_fabric(void* comm, int rank, int ranks) {
  return std::make_unique<NcclFabric>(comm, rank, ranks);
}
std::unique_ptr<Fabric> loopback_fabric(int ranks) { return std::make_unique<LoopbackFabric>(ranks); }

}  // namespace treering::realrun::cuda::detail
