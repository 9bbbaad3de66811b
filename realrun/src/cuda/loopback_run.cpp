// run_loopback (cuda_decode.hpp): the plan's P ranks as P host threads on the current GPU, each with its own
// GpuDecode over a loopback DeviceComm, meeting at the hub. A rank that fails aborts the hub, so the others stop
// at their next wait instead of running into the timeout.
#include <cuda_runtime.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "../loopback_hub.hpp"
#include "device_comm.hpp"
#include "treering/realrun/cuda_decode.hpp"

namespace treering::realrun::cuda {

LoopbackResult run_loopback(const model::DecodePlan& plan, std::uint64_t seed, int warmup, int repeats, double timeout_s) {
  const int ranks = static_cast<int>(plan.gpus.size());
  if (repeats < 1 || warmup < 1) throw std::invalid_argument("a loopback run needs at least one warm-up run and one timed run");
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw std::runtime_error("loopback: no current CUDA device");
  realrun::detail::LoopbackHub hub(ranks, timeout_s);
  LoopbackResult result;
  result.ranks.resize(static_cast<size_t>(ranks));
  std::vector<std::vector<double>> elapsed(static_cast<size_t>(ranks));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        if (cudaSetDevice(device) != cudaSuccess) throw std::runtime_error("loopback: cannot select the device in a rank's thread");
        GpuDecode decode(plan, rank, detail::loopback_comm(hub, rank), seed, timeout_s);
        for (int run = 0; run < warmup + repeats; ++run) {
          GpuRankResult mine = decode.run();
          if (run >= warmup) elapsed[static_cast<size_t>(rank)].push_back(mine.elapsed_s);
          result.ranks[static_cast<size_t>(rank)] = std::move(mine);
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        hub.abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  for (int run = 0; run < repeats; ++run) {
    double slowest = 0;
    for (const auto& times : elapsed) slowest = std::max(slowest, times[static_cast<size_t>(run)]);
    result.latencies_s.push_back(slowest);
  }
  result.timing_note = "loopback: " + std::to_string(ranks) +
                       " virtual ranks share one GPU (its SMs, memory bandwidth and copy engines) and a transfer is a copy inside "
                       "it; the times check the plan's execution, they are not a cluster's step time";
  return result;
}

}  // namespace treering::realrun::cuda
