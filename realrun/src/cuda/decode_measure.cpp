// cuda_decode.hpp: a DecodeStep over a fabric, warmed up, captured N times in a CUDA graph, and timed by replays.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include "decode_step.hpp"
#include "device_fabric.hpp"
#include "graph_timing.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda {
namespace {

using detail::check;

// The stream, events and graph of a measurement, released however it ends.
struct Clock {
  cudaStream_t main = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t replay = nullptr;
  Clock() {
    check(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~Clock() {  // no synchronisation: after a hang it would never return
    if (replay) cudaGraphExecDestroy(replay);
    if (graph) cudaGraphDestroy(graph);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(main);
  }
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
};

struct Waiter {  // polls the stream until done or the deadline (a hung peer would block a synchronize forever)
  double timeout_s;
  std::string who;
  std::function<void(const std::string&)> on_hang;
  void operator()(cudaStream_t stream, const std::string& what) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream);
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady) check(status, "cudaStreamQuery");
      if (std::chrono::steady_clock::now() > deadline) {
        const std::string message = who + ": " + what + " did not finish within " + std::to_string(timeout_s) + " s";
        if (on_hang) on_hang(message);  // before unwinding: freeing device memory would wait for the hung work
        throw GpuHang(message);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
};

double elapsed_s(const Clock& clock) {
  float milliseconds = 0;
  check(cudaEventElapsedTime(&milliseconds, clock.start, clock.stop), "cudaEventElapsedTime");
  return 1e-3 * milliseconds;
}

// Warm-up (bytes counted on the last), one step alone, then the graph of N steps and its timed replays.
GpuMeasurement measure(detail::DecodeStep& step, detail::Fabric& fabric, const GpuTiming& timing,
                       const Waiter& wait_for, const std::function<void()>& host_barrier,
                       const std::function<double(double)>& max_over_ranks) {
  if (timing.warmup < 1 || timing.samples < 1)
    throw topologies::InputError("a GPU measurement needs at least one warm-up step and one sample");
  Clock clock;
  GpuMeasurement m;
  auto barrier = [&] {
    if (host_barrier) host_barrier();
    fabric.device_barrier(clock.main);
  };
  for (int w = 0; w < timing.warmup; ++w) {
    if (w == timing.warmup - 1) {
      for (int local = 0; local < step.local_count(); ++local) fabric.take_bytes_sent(step.rank_of(local));
    }
    step.enqueue(clock.main);
    wait_for(clock.main, "a warm-up step");
  }
  for (int local = 0; local < step.local_count(); ++local) {
    m.ranks.push_back(step.rank_of(local));
    m.bytes_sent.push_back(fabric.take_bytes_sent(step.rank_of(local)));
  }
  barrier();
  check(cudaEventRecord(clock.start, clock.main), "cudaEventRecord");
  step.enqueue(clock.main);
  check(cudaEventRecord(clock.stop, clock.main), "cudaEventRecord");
  wait_for(clock.main, "a step timed alone");
  double steps = std::ceil(timing.min_sample_s / std::max(elapsed_s(clock), 1e-7));
  if (max_over_ranks) steps = max_over_ranks(steps);
  m.steps_per_sample =
      static_cast<int>(std::clamp(steps, 1.0, static_cast<double>(std::max(1, timing.max_steps_per_sample))));
  clock.graph = detail::capture_graph(clock.main, [&] {
    for (int n = 0; n < m.steps_per_sample; ++n) step.enqueue(clock.main);
  });
  check(cudaGraphInstantiate(&clock.replay, clock.graph, 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(clock.replay, clock.main), "cudaGraphLaunch");  // the graph's first launch, untimed
  wait_for(clock.main, "the graph's first replay");
  for (int s = 0; s < timing.samples; ++s) {
    barrier();
    check(cudaEventRecord(clock.start, clock.main), "cudaEventRecord");
    check(cudaGraphLaunch(clock.replay, clock.main), "cudaGraphLaunch");
    check(cudaEventRecord(clock.stop, clock.main), "cudaEventRecord");
    wait_for(clock.main, "a sample of " + std::to_string(m.steps_per_sample) + " steps");
    m.step_s.push_back(elapsed_s(clock) / m.steps_per_sample);
  }
  for (int local = 0; local < step.local_count(); ++local) m.outputs.push_back(step.output(local));
  m.collective_bytes_observed = fabric.collective_bytes_observed();
  return m;
}

std::string waiting_for(const model::DecodePlan& plan, int rank) {
  const int ranks = static_cast<int>(plan.gpus.size());
  if (ranks == 1) return "one rank: a device fault or a kernel that does not end";
  if (model::has_phase(plan, model::PhaseRole::kv_ring)) {
    return "waiting for rank " + std::to_string((rank + ranks - 1) % ranks) + "'s K/V block or rank " +
           std::to_string((rank + 1) % ranks) + " to take this one's";
  }
  return "waiting in a collective or transfer with the other " + std::to_string(ranks - 1) +
         " ranks: one of them stalled";
}

}  // namespace

GpuMeasurement measure_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed,
                              const GpuTiming& timing, const std::function<void()>& host_barrier,
                              const std::function<double(double)>& max_over_ranks) {
  detail::check_cuda_plan(plan);
  const int ranks = static_cast<int>(plan.gpus.size());
  if (rank < 0 || rank >= ranks) throw std::logic_error("no rank " + std::to_string(rank) + " in the plan");
  if (ranks > 1) {
    int members = 0;
    if (nccl_comm == nullptr || ncclCommCount(static_cast<ncclComm_t>(nccl_comm), &members) != ncclSuccess ||
        members != ranks) {
      throw topologies::InputError("a plan over " + std::to_string(ranks) +
                                   " GPUs needs an NCCL communicator of as many");
    }
  }
  const auto fabric = detail::nccl_fabric(nccl_comm, rank, ranks);
  detail::DecodeStep step(plan, *fabric, seed);
  const Waiter wait_for{timing.timeout_s, "rank " + std::to_string(rank) + " (" + waiting_for(plan, rank) + ")",
                        timing.on_hang};
  return measure(step, *fabric, timing, wait_for, host_barrier, max_over_ranks);
}

GpuMeasurement measure_loopback(const model::DecodePlan& plan, std::uint64_t seed, const GpuTiming& timing) {
  detail::check_cuda_plan(plan);
  const int ranks = static_cast<int>(plan.gpus.size());
  const auto fabric = detail::loopback_fabric(ranks);
  detail::DecodeStep step(plan, *fabric, seed);
  GpuMeasurement m = measure(
      step, *fabric, timing,
      Waiter{timing.timeout_s, "loopback, " + std::to_string(ranks) + " virtual ranks", timing.on_hang}, {}, {});
  m.timing_note = "loopback: " + std::to_string(ranks) +
                  " virtual ranks share one GPU (its SMs, memory bandwidth and copy engines) and a transfer is a "
                  "device copy; the time is "
                  "that GPU work (predict it with a loopback cluster), not a cluster's step time";
  return m;
}

bool decode_available(std::string& why) { return available(why); }

}  // namespace treering::realrun::cuda
