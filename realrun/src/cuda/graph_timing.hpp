// CUDA-graph timing of a repeated call, as nccl-tests batches its calls and serving engines replay a captured step.
// Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "treering/realrun/bench.hpp"

namespace treering::realrun::cuda::detail {

// The graph of what enqueue(stream) enqueues. If enqueue throws, the capture is ended (every stream that joined it
// leaves capture mode) and the partial graph dropped before the exception goes on.
template <typename Enqueue>
cudaGraph_t capture_graph(cudaStream_t stream, Enqueue enqueue) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
    cudaGetLastError();  // the failed capture's error is not the one to report
    throw;
  }
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  return graph;
}

// Seconds per call of body(i, stream) (the i-th call of the run), as nccl-tests and serving engines time: `warmup`
// calls (at least one: modules load, workspaces grow), one call timed alone to size the samples, then a CUDA graph
// of plan.calls_per_sample calls (bench.hpp's plan_gpu_timing) captured once and replayed `iterations` times, one
// event pair around each replay. The graph removes the host's launches from what is timed: a sample is the device's
// back-to-back work, as a decode step captured in a graph runs it.
template <typename Body>
std::vector<double> graph_times(int warmup, int iterations, double bytes_per_call, int copies_held, Body body) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t replay = nullptr;
  auto elapsed_s = [&] {
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
    return milliseconds * 1e-3;
  };
  std::vector<double> seconds;
  try {
    long long call = 0;
    for (int i = 0; i < std::max(1, warmup); ++i) body(call++, stream);
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    body(call++, stream);
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    const double estimate_s = elapsed_s();
    // A sample lasts a millisecond or more, and spans a whole rotation of the inputs.
    const int calls =
        std::max(copies_held, plan_gpu_timing(std::max(1.0, bytes_per_call), 0, 0, estimate_s).calls_per_sample);
    graph = capture_graph(stream, [&] {
      for (int c = 0; c < calls; ++c) body(call++, stream);
    });
    check(cudaGraphInstantiate(&replay, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");  // the graph's own first launch, untimed
    for (int i = 0; i < iterations; ++i) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      seconds.push_back(elapsed_s() / calls);
    }
  } catch (...) {  // the capture, if any, was ended by capture_graph; no wait for the device
    if (replay) cudaGraphExecDestroy(replay);
    if (graph) cudaGraphDestroy(graph);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
    throw;
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaGraphExecDestroy(replay);
  cudaGraphDestroy(graph);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return seconds;
}

}  // namespace treering::realrun::cuda::detail
