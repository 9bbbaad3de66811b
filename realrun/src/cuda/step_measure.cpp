// step_run.hpp's cuda::measure_step: the fit check, the graph's replays, the parts pass.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "graph_timing.hpp"
#include "step_device.hpp"
#include "treering/model/statistics.hpp"

namespace treering::realrun::cuda {
namespace {

using namespace detail;

constexpr int kPartSamples = 5;
constexpr int kSteadyReplays = 20;
constexpr double kSteadyS = 0.2;

double elapsed_s(const cudaEvent_t start, const cudaEvent_t stop) {
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float milliseconds = 0;
  check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
  return milliseconds * 1e-3;
}

// One step captured and replayed: seconds per replay.
std::vector<double> time_graph(StepRunner& runner, cudaStream_t stream, int iterations) {
  cudaGraph_t graph = capture_graph(stream, [&] { runner.enqueue(stream, nullptr); });
  cudaGraphExec_t replay = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<double> seconds;
  try {
    check(cudaGraphInstantiate(&replay, graph, 0), "cudaGraphInstantiate");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    // Untimed replays first, until the step is steady: at least kSteadyReplays and kSteadyS. (On an H100, a
    // llama3.2-1b step at batch 32 replayed at 3.58 ms for its first ~18 runs, then at 3.12 ms from then on.)
    double warm_s = 0;
    for (int i = 0; i < kSteadyReplays || warm_s < kSteadyS; ++i) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      warm_s += elapsed_s(start, stop);
    }
    for (int i = 0; i < iterations; ++i) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      seconds.push_back(elapsed_s(start, stop));
    }
  } catch (...) {
    if (replay) cudaGraphExecDestroy(replay);
    cudaGraphDestroy(graph);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    throw;
  }
  cudaGraphExecDestroy(replay);
  cudaGraphDestroy(graph);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
}

// The parts: per part the median over kPartSamples steps, and the median whole.
void time_parts(StepRunner& runner, cudaStream_t stream, StepMeasurement& m) {
  std::vector<std::array<double, kStepParts>> samples;
  std::vector<double> wholes;
  auto collect = [&](const PartMarks& marks) {
    double whole_s = 0;
    samples.push_back(marks.read(whole_s));
    wholes.push_back(whole_s);
    m.part_intervals = marks.intervals();
  };
  try {
    PartMarks marks(true);
    cudaGraph_t graph = capture_graph(stream, [&] { runner.enqueue(stream, &marks); });
    cudaGraphExec_t replay = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&replay, graph, 0);
    cudaGraphDestroy(graph);
    check(made, "cudaGraphInstantiate (parts)");
    check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");
    for (int i = 0; i < kPartSamples; ++i) {
      check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      collect(marks);
    }
    cudaGraphExecDestroy(replay);
    m.parts_method = "CUDA graph of the step with event nodes at the parts' boundaries";
  } catch (const std::runtime_error&) {
    cudaGetLastError();
    samples.clear();
    wholes.clear();
    for (int i = 0; i < kPartSamples; ++i) {
      PartMarks marks(false);
      runner.enqueue(stream, &marks);
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      collect(marks);
    }
    m.parts_method = "uncaptured steps with events at the parts' boundaries (launch gaps included)";
  }
  for (std::size_t p = 0; p < kStepParts; ++p) {
    std::vector<double> values;
    for (const auto& sample : samples) values.push_back(sample[p]);
    m.part_raw_s[p] = model::median(values);
  }
  m.parts_pass_s = model::median(wholes);
  int intervals = 0;
  for (int count : m.part_intervals) intervals += count;
  m.mark_overhead_s = intervals > 0 ? std::max(0.0, m.parts_pass_s - model::median(m.step_s)) / intervals : 0.0;
  for (std::size_t p = 0; p < kStepParts; ++p) {
    m.part_s[p] = std::max(0.0, m.part_raw_s[p] - m.part_intervals[p] * m.mark_overhead_s);
  }
}

}  // namespace

StepOutputs run_step_once(const StepShape& shape, std::uint64_t seed) {
  StepRunner runner(shape, seed);
  Stream stream;
  runner.enqueue(stream.handle, nullptr);
  check(cudaStreamSynchronize(stream.handle), "cudaStreamSynchronize (step)");
  return runner.outputs();
}

StepMeasurement measure_step(const StepShape& shape, int warmup, int iterations, std::uint64_t seed) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  check_fits(shape, shape.tp, static_cast<double>(free_bytes) - 0.5e9);  // room for cuBLASLt and the graphs
  StepMeasurement m;
  m.shape = shape;
  m.bytes = step_bytes(shape);
  StepRunner runner(shape, seed);
  Stream stream;
  for (int i = 0; i < std::max(1, warmup); ++i) runner.enqueue(stream.handle, nullptr);
  check(cudaStreamSynchronize(stream.handle), "cudaStreamSynchronize (warm-up)");
  m.step_s = time_graph(runner, stream.handle, std::max(1, iterations));
  m.next_tokens = runner.next_tokens();
  m.non_finite = runner.non_finite_hidden();
  m.collectives = runner.collectives_per_step();
  time_parts(runner, stream.handle, m);
  check(cudaStreamSynchronize(stream.handle), "cudaStreamSynchronize");
  return m;
}

}  // namespace treering::realrun::cuda
