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
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup, int iterations);
double attention_bytes(const AttentionShape& shape, long long tokens);

}  // namespace treering::realrun
