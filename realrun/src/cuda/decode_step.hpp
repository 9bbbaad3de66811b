// One decode step of a plan on the device, for every rank this process runs (NCCL: its own; loopback: all P),
// enqueued by one host thread: each rank has a compute and a transfer stream forked from the caller's stream and
// joined back into it, so a step is ordered after the last one and can be captured in a CUDA graph. Inputs are made
// on the device (input_hash.hpp), every buffer and event before the first step; a step allocates nothing.
// Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "device_fabric.hpp"
#include "treering/model/plan.hpp"

namespace treering::realrun::cuda::detail {

class DecodeStep {
 public:
  // Plans made with realrun::plan_options(Backend::cuda) (fp32 partial states) with replicated outputs; throws
  // std::invalid_argument otherwise.
  DecodeStep(const model::DecodePlan& plan, Fabric& fabric, std::uint64_t seed);
  ~DecodeStep();
  DecodeStep(const DecodeStep&) = delete;
  DecodeStep& operator=(const DecodeStep&) = delete;

  void enqueue(cudaStream_t main);             // one step, after what `main` holds; `main` then waits for its end
  std::vector<float> output(int local) const;  // local rank `local`'s o ([b][n_h][d]) after the last step
  int local_count() const;
  int rank_of(int local) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws std::invalid_argument naming what the cuda backend cannot run.
void check_cuda_plan(const model::DecodePlan& plan);

}  // namespace treering::realrun::cuda::detail
