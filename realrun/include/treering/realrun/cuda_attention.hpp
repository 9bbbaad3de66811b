// Split-KV flash-decoding on an NVIDIA GPU: the partial attention of attention.hpp (same layouts, same
// (o, lse) in natural log, fp32 accumulation) for head dims 64 and 128, bf16 or fp16, grouped-query attention.
// The kernel's indexing and arithmetic are split_kv.hpp's (one CTA per sequence, KV head, group of up to 8
// query heads and chunk; 128-bit loads, 4 tokens in flight per lane group; enough chunks for two waves of CTAs),
// and the chunks' states are merged by merge.hpp's rule in one more launch. No CUDA types here: streams are void*.
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

// The kernel as a decode step keeps it: the device's SM count asked once, the chunks' workspace allocated on the
// first call that needs it (or a bigger one) and kept, so that a timed call allocates nothing. On the current device.
class SplitKvAttention {
 public:
  SplitKvAttention();
  ~SplitKvAttention();
  SplitKvAttention(const SplitKvAttention&) = delete;
  SplitKvAttention& operator=(const SplitKvAttention&) = delete;
  // Device pointers, 16-byte aligned; o: [b][n_h][d] floats, lse: [b][n_h] floats. `splits` 0: the chunks
  // split_kv::choose_chunks gives for this device. Asynchronous on `stream`.
  void run(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
           long long tokens, float* o, float* lse, int splits = 0, void* stream = nullptr);
  int chunks_for(const AttentionShape& shape, Dtype dtype, long long tokens) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One call with a kernel of its own (tests and checks): returns when the stream is done.
void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse, int splits = 0,
                       void* stream = nullptr);

// The same from host arrays (copied to the device and back), for tests and checks.
void partial_attention_from_host(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q,
                                 const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                                 long long tokens, std::vector<float>& o, std::vector<float>& lse, int splits = 0);

// Timings with CUDA events, seconds per call after `warmup` calls (at least 1): each sample times a batch of
// back-to-back calls between one pair of events (as nccl-tests does: an event pair around a single short launch
// times the host's launch), and the calls rotate over enough copies of their inputs to exceed twice the L2 cache,
// so that what is timed is read from HBM, as a decode step's K/V is. `bytes` copied device to device; the kernel
// over `tokens` tokens.
std::vector<double> time_copy(double bytes, int warmup, int iterations);
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup, int iterations);

}  // namespace treering::realrun::cuda
