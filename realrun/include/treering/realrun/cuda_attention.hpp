// Split-KV flash-decoding on an NVIDIA GPU: the partial attention of attention.hpp (same layouts, same
// (o, lse) in natural log, fp32 accumulation) for head dims 64 and 128, bf16 or fp16, MHA and grouped-query
// attention. The kernel's indexing and arithmetic are split_kv.hpp's: tensor cores (mma.sync m16n8k16, the query
// heads of a KV head as the 16 rows), K/V staged per warp through shared memory by cp.async, one wave of CTAs, and
// the chunks' states merged by merge.hpp's rule inside the same launch (the last CTA of each head block). One
// launch, no host query per call: a call can be captured in a CUDA graph. No CUDA types here: streams are void*.
// Without the CUDA toolkit at build time, available() says so and the rest throws std::runtime_error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "treering/realrun/attention.hpp"

namespace treering::realrun::cuda {

// True when a device can run the kernels; else `why` says what is missing.
bool available(std::string& why);
std::string device_name();  // of the current device ("" when none)

// The kernel as a decode step keeps it: the device's SM count and the kernel's occupancy asked once, the chunks'
// workspace allocated on the first call that needs it (or a bigger one) and kept, so that a timed call allocates
// nothing and asks nothing. On the current device. Calls on one object must be ordered (one stream, or streams
// joined by events): they share the workspace and its arrival counts.
class SplitKvAttention {
 public:
  SplitKvAttention();
  ~SplitKvAttention();
  SplitKvAttention(const SplitKvAttention&) = delete;
  SplitKvAttention& operator=(const SplitKvAttention&) = delete;
  // Device pointers, 16-byte aligned; o: [b][n_h][d] floats, lse: [b][n_h] floats. `splits` 0: the chunks
  // split_kv::choose_chunks gives for this device. Asynchronous on `stream`.
  void run(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
           const std::uint16_t* v, long long tokens, float* o, float* lse, int splits = 0, void* stream = nullptr);
  int chunks_for(const AttentionShape& shape, Dtype dtype, long long tokens) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One call with a kernel of its own (tests and checks): returns when the stream is done.
void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse, int splits = 0,
                       void* stream = nullptr);

// The same from host arrays (copied to the device and back), for tests and checks: `calls` calls in a row on one
// SplitKvAttention (its workspace and arrival counts reused), the last one's output returned.
void partial_attention_from_host(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q,
                                 const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                                 long long tokens, std::vector<float>& o, std::vector<float>& lse, int splits = 0,
                                 int calls = 1);

// Timings with CUDA events, seconds per call after `warmup` calls (at least 1): each sample is one replay of a CUDA
// graph of back-to-back calls between one pair of events (as nccl-tests batches its calls and serving engines
// replay a captured step: an event pair around a single short launch times the host's launch), and the calls
// rotate over enough copies of their random inputs to exceed twice the L2 cache, so that what is timed is read
// from HBM, as a decode step's K/V is. `bytes` copied device to device; the kernel over `tokens` tokens.
std::vector<double> time_copy(double bytes, int warmup, int iterations);
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup,
                                   int iterations);

}  // namespace treering::realrun::cuda
