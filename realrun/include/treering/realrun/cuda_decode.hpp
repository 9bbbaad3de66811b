// The cuda backend's decode: a plan run on GPUs, in one of two ways.
//  - NCCL: one GPU per rank (one MPI rank each). The ring passes K/V blocks with ncclSend/ncclRecv on a stream of
//    its own while the attention kernel runs on another, the two handing over with events; tree and tree-fused
//    reduce with NCCL's all-reduce (as the paper does); tree-lse sends its states point to point and merges them on
//    the device; allgather-merge gathers with NCCL and merges on the device. NCCL's collectives move bytes the
//    program cannot see (`collective_bytes_observed` false).
//  - Loopback: the plan's P ranks as P host threads with streams of their own on ONE GPU; sends are device copies
//    handed over with events, collectives rings of them (cut as the cpu backend's), so every byte is counted and
//    must equal the model's. Its times are not a cluster's: the P ranks share one GPU's SMs and memory, and a
//    transfer is a copy inside it (`run_loopback` says so in its result).
// Every run: inputs and buffers made before any clock; then reset, the ranks' barrier, and CUDA events from there
// to the end of the last stream, with no host synchronisation in between; waits for the device have a deadline
// (GpuHang names the rank and what it waited for). Without CUDA or NCCL in the build, available() says why and
// the rest throws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "treering/model/plan.hpp"

namespace treering::realrun::cuda {

namespace detail {
class DeviceComm;
}

bool decode_available(std::string& why);

struct GpuRankResult {
  std::vector<float> o;            // the rank's final output, [b][n_h][d], copied back
  double bytes_sent = 0;           // bytes this rank sent (loopback: collectives' too)
  bool collective_bytes_observed = true;  // false when the plan's collectives ran inside NCCL
  double elapsed_s = 0;            // CUDA events: from the barrier to the end of its last stream
};

// The device did not finish within the timeout: a peer stalled or died. The program aborts the job.
struct GpuHang : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A plan prepared on this rank's GPU (inputs hashed and uploaded, every buffer, stream and event made), then run as
// many times as wanted. Plans made with realrun::plan_options(Backend::cuda) (fp32 partial states); the deployed
// combines (pass-q, a2a, ag-rs) are refused (the cpu backend runs them). Throws std::invalid_argument otherwise.
class GpuDecode {
 public:
  // `nccl_comm`: an ncclComm_t of the plan's ranks, this one `rank` (nullptr for one rank); `barrier`: the ranks'
  // host barrier (MPI's; none for one rank).
  GpuDecode(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed, std::function<void()> barrier = {},
            double timeout_s = 600);
  GpuDecode(const model::DecodePlan& plan, int rank, std::unique_ptr<detail::DeviceComm> comm, std::uint64_t seed, double timeout_s);
  ~GpuDecode();
  GpuDecode(const GpuDecode&) = delete;
  GpuDecode& operator=(const GpuDecode&) = delete;
  GpuRankResult run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Prepare and run once (one rank, or with an NCCL communicator).
GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed);

// Loopback: all of the plan's ranks on the current GPU, `warmup` untimed runs then `repeats` timed ones.
struct LoopbackResult {
  std::vector<GpuRankResult> ranks;  // the last run's, rank by rank
  std::vector<double> latencies_s;   // per timed run, the slowest virtual rank's
  std::string timing_note;           // what the times are (and are not)
};
LoopbackResult run_loopback(const model::DecodePlan& plan, std::uint64_t seed, int warmup, int repeats, double timeout_s);

}  // namespace treering::realrun::cuda
