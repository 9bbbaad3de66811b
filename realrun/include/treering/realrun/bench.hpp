// Microbenchmarks of the cpu backend, as nccl-tests and CUDA's bandwidthTest measure: collectives over the
// transport (the ring code the plans run), the host's copy bandwidth, and the partial-attention kernel.
// Times are this rank's; the program takes the slowest rank's per iteration.
#pragma once

#include <string>
#include <vector>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/transport.hpp"

namespace treering::realrun {

enum class BenchOp { allreduce, allgather, sendrecv };
BenchOp parse_bench_op(const std::string& name);  // throws std::invalid_argument
const char* to_string(BenchOp op);

// nccl-tests' bus factor: all-reduce 2 (n-1)/n, all-gather (n-1)/n, send/recv 1. busbw = algbw x factor.
double bus_factor(BenchOp op, int ranks);

// Per iteration (after `warmup` untimed ones), this rank's seconds for one `op` of `bytes` (all-reduce: the
// buffer, fp32 sum; all-gather: the output, bytes / ranks from each; send/recv: each rank sends `bytes` to the
// next and receives as much from the previous). Sizes are rounded down to whole floats (at least one).
std::vector<double> time_collective(Transport& transport, BenchOp op, double bytes, int warmup, int iterations);

// Host memory: seconds per copy of `bytes` (memcpy), per iteration.
std::vector<double> time_copy(double bytes, int warmup, int iterations);

// The partial-attention kernel over `tokens` tokens: seconds per call, per iteration; and the bytes it reads
// (K and V, q) for the achieved bandwidth.
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup,
                                   int iterations);
double attention_bytes(const AttentionShape& shape, long long tokens);

// How a GPU timing (cuda_attention.hpp's time_copy and time_attention) rotates over copies of its inputs and
// batches its calls between one pair of events:
//   copies = ceil(2 x l2_bytes / bytes_per_call), at least 1, at most what memory_budget_bytes holds: the data a call
//            reads was evicted from the L2 by the calls since its last use, so the timing is HBM's, not the L2's;
//   calls_per_sample = enough calls to last min_sample_s at estimated_call_s each, and at least one whole rotation
//            (copies calls), at most 10,000: one event pair around a 10 us launch would time the host, not the kernel.
// Example: an 8 MB attention call (1k tokens of paper-mha16) on a 50 MB L2: 13 copies; at 10 us a call, 100 calls
// (1 ms) per sample. A 1 GB call: 1 copy, 1 call per sample when it takes 1 ms or more.
struct GpuTimingPlan {
  int copies = 1;
  int calls_per_sample = 1;
};
GpuTimingPlan plan_gpu_timing(double bytes_per_call, double l2_bytes, double memory_budget_bytes,
                              double estimated_call_s, double min_sample_s = 1e-3);

}  // namespace treering::realrun
