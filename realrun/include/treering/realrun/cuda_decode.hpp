// The cuda backend's decode: a plan run on this rank's GPU, one rank per GPU, NCCL between them. The ring
// passes K/V blocks with ncclSend/ncclRecv on a stream of their own while the attention kernel runs on another;
// tree and tree-fused reduce with NCCL's own all-reduce (as the paper does); tree-lse sends its states point to
// point and merges them on the device; allgather-merge gathers with NCCL and merges on the device.
// The bytes counted are those this rank sends point to point (ring, tree-lse); what NCCL's collectives move
// inside is not observable, and `collective_bytes_observed` says so. Without CUDA or NCCL in the build,
// available() says why and run() throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "treering/model/plan.hpp"

namespace treering::realrun::cuda {

bool decode_available(std::string& why);

struct GpuRankResult {
  std::vector<float> o;            // the rank's final output, [b][n_h][d], copied back
  double bytes_sent = 0;           // point-to-point bytes this rank sent
  bool collective_bytes_observed = true;  // false when the plan's collectives ran inside NCCL
  double elapsed_s = 0;            // from the call to the last stream's end
};

// A plan prepared on this rank's GPU (inputs hashed and uploaded, every buffer and stream made), then run as
// many times as wanted: run() synchronises the device, and times from there to the end of its last stream.
// `nccl_comm`: an ncclComm_t of the plan's ranks, this one `rank` (the caller made it; nullptr for one rank).
// Plans made with realrun::plan_options() (fp32 partial states). Throws std::invalid_argument otherwise.
class GpuDecode {
 public:
  GpuDecode(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed);
  ~GpuDecode();
  GpuDecode(const GpuDecode&) = delete;
  GpuDecode& operator=(const GpuDecode&) = delete;
  GpuRankResult run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Prepare and run once.
GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed);

}  // namespace treering::realrun::cuda
