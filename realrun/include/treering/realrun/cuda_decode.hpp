// The cuda backend's decode: a plan run on GPUs and timed as serving engines and nccl-tests time, in one of two ways.
//  - NCCL: one GPU per rank (one MPI rank each). The ring passes K/V blocks with ncclSend/ncclRecv on a stream of
//    its own while the attention kernel runs on another, the two handing over with events; tree and tree-fused
//    reduce with NCCL's all-reduce (as the paper does; NCCL picks its algorithm and protocol); tree-lse sends its
//    states point to point and merges them on the device; allgather-merge gathers with NCCL and merges on the
//    device. NCCL's collectives move bytes the program cannot see (`collective_bytes_observed` false).
//  - Loopback: the plan's P ranks as P pairs of streams on ONE GPU, driven by one host thread; sends are device
//    copies ordered by events, collectives rings of them (cut as the cpu backend's), so every byte is counted and
//    must equal the model's. The P ranks share the GPU's SMs, memory and copy engines: a loopback time is the time
//    of that GPU work, which `treering` predicts with a loopback cluster (topologies' loopback presets).
// How a step is timed: inputs made on the device and every buffer before the clock; a warm-up step; one step timed
// alone to size the samples; then a CUDA graph of N steps (each step forked from and joined back into one stream,
// so each follows the last) captured once; each sample is one replay between two CUDA events, after the ranks' host
// barrier and a device barrier (a one-float NCCL all-reduce), with no host work inside. Waits for the device have
// a deadline (GpuHang names the rank and what it waited for). Without CUDA or NCCL in the build, decode_available()
// says why and the rest throws.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/realrun/bench.hpp"

namespace treering::realrun::cuda {

bool decode_available(std::string& why);

struct GpuTiming {
  int warmup = 1;                 // untimed steps first (at least 1: modules load, workspaces grow, NCCL connects)
  int samples = 10;               // graph replays timed
  double min_sample_s = 1e-3;     // a sample lasts at least this (N = ceil(min_sample_s / one step))...
  int max_steps_per_sample = 64;  // ... but has at most this many steps
  double timeout_s = 600;         // a wait for the device longer than this is a hang
  // Called with the hang's message before GpuHang unwinds the measurement (whose device memory cannot be freed while
  // the hung work runs): the program aborts NCCL and the job there.
  std::function<void(const std::string&)> on_hang;
};

struct GpuMeasurement {
  std::vector<int> ranks;                   // the plan's ranks this process ran (NCCL: its own; loopback: all)
  std::vector<std::vector<float>> outputs;  // each one's o ([b][n_h][d]) after the last step
  std::vector<double> bytes_sent;           // each one's bytes in one step (loopback: the collectives' too)
  bool collective_bytes_observed = true;    // false when the plan's collectives ran inside NCCL
  std::vector<double> step_s;               // per sample: the replay's seconds / steps_per_sample
  int steps_per_sample = 1;
  std::string timing_note;  // loopback: what the times are
};

// The device did not finish within the timeout: a peer stalled or died. The program aborts the job.
struct GpuHang : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rank `rank` of an NCCL job: `nccl_comm` an ncclComm_t of the plan's ranks (nullptr for one rank), `host_barrier`
// the ranks' barrier (MPI's), `max_over_ranks` the largest of a value over the ranks (so that every rank's graph
// holds the same number of steps). Plans made with realrun::plan_options(Backend::cuda); the deployed combines
// (pass-q, a2a, ag-rs) are refused (the cpu backend runs them): std::invalid_argument.
GpuMeasurement measure_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed,
                              const GpuTiming& timing, const std::function<void()>& host_barrier = {},
                              const std::function<double(double)>& max_over_ranks = {});

// Loopback: all of the plan's ranks on the current GPU.
GpuMeasurement measure_loopback(const model::DecodePlan& plan, std::uint64_t seed, const GpuTiming& timing);

// The loopback's own collectives alone (`bench allreduce|allgather|sendrecv --backend cuda --loopback P`): seconds per
// call, per sample, of `ranks` virtual ranks on the current GPU, sizes as bench.hpp's time_collective.
std::vector<double> time_loopback_collective(BenchOp op, double bytes, int ranks, int warmup, int iterations);

}  // namespace treering::realrun::cuda
