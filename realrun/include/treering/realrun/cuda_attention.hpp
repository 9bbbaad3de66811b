// Split-KV flash-decoding on an NVIDIA GPU: the partial attention of attention.hpp (same layouts, same
// (o, lse) in natural log, fp32 accumulation) for head dims 64 and 128, bf16 or fp16, grouped-query attention.
// The tokens are cut into `splits` chunks, one thread block per (sequence, head, chunk), 4 warps each taking
// every 4th token with the head dim spread over the lanes; the chunks' states are then merged by merge.hpp's
// rule, on the device. No CUDA types here: streams are void*.
// Without the CUDA toolkit at build time, available() says so and the rest throws std::runtime_error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "treering/realrun/attention.hpp"

namespace treering::realrun::cuda {

// True when a device can run the kernels; else `why` says what is missing.
bool available(std::string& why);
std::string device_name();  // of the current device ("" when none)

// Device pointers; o: [b][n_h][d] floats, lse: [b][n_h] floats. `splits` 0: enough chunks to fill the device.
void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse, int splits = 0,
                       void* stream = nullptr);

// The same from host arrays (copied to the device and back), for tests and checks.
void partial_attention_from_host(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q,
                                 const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                                 long long tokens, std::vector<float>& o, std::vector<float>& lse, int splits = 0);

// Timings with CUDA events, per iteration after `warmup`: a device-to-device copy of `bytes`, and the kernel
// over `tokens` tokens (inputs on the device).
std::vector<double> time_copy(double bytes, int warmup, int iterations);
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup, int iterations);

}  // namespace treering::realrun::cuda
