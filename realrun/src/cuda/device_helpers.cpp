// Host-side helpers of cuda_attention.hpp: copies for tests, and CUDA-event timings (batched calls over rotating
// inputs, bench.hpp's plan_gpu_timing).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "treering/realrun/bench.hpp"
#include "treering/realrun/cuda_attention.hpp"

namespace treering::realrun::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// A device buffer freed when it goes.
struct DeviceBuffer {
  void* pointer = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&pointer, bytes > 0 ? bytes : 1), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(pointer); }
  DeviceBuffer(DeviceBuffer&& other) noexcept : pointer(other.pointer) { other.pointer = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(pointer); }
};

template <typename T>
DeviceBuffer upload(const std::vector<T>& values) {
  DeviceBuffer buffer(values.size() * sizeof(T));
  if (!values.empty()) check(cudaMemcpy(buffer.pointer, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return buffer;
}

// Seconds per call of body(i) (the i-th call of the run) on the default stream: `warmup` calls (at least one),
// one call timed alone to estimate its length, then `iterations` samples, each an event pair around
// plan.calls_per_sample back-to-back calls (bench.hpp's plan_gpu_timing).
template <typename Body>
std::vector<double> event_times(int warmup, int iterations, double bytes_per_call, int copies_held, Body body) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  auto elapsed_s = [&] {
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
    return milliseconds * 1e-3;
  };
  long long call = 0;
  for (int i = 0; i < std::max(1, warmup); ++i) body(call++);
  check(cudaEventRecord(start), "cudaEventRecord");
  body(call++);
  check(cudaEventRecord(stop), "cudaEventRecord");
  const double estimate_s = elapsed_s();
  // A sample lasts a millisecond or more, and spans a whole rotation of the inputs.
  const int calls = std::max(copies_held, plan_gpu_timing(std::max(1.0, bytes_per_call), 0, 0, estimate_s).calls_per_sample);
  std::vector<double> seconds;
  for (int i = 0; i < iterations; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int c = 0; c < calls; ++c) body(call++);
    check(cudaEventRecord(stop), "cudaEventRecord");
    seconds.push_back(elapsed_s() / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
}

// Copies of a call's inputs to rotate over: plan_gpu_timing's for this device's L2, within half the free memory.
int rotation_copies(double bytes_per_call) {
  int device = 0, l2_bytes = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return plan_gpu_timing(std::max(1.0, bytes_per_call), l2_bytes, 0.5 * static_cast<double>(free_bytes), 0).copies;
}

}  // namespace

void partial_attention_from_host(const AttentionShape& shape, Dtype dtype, const std::vector<std::uint16_t>& q,
                                 const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                                 long long tokens, std::vector<float>& o, std::vector<float>& lse, int splits) {
  check_shape(shape);
  const auto kv = static_cast<size_t>(tokens * shape.kv_values_per_token());
  if (q.size() != static_cast<size_t>(shape.q_values()) || k.size() != kv || v.size() != kv) {
    throw std::invalid_argument("partial_attention_from_host: q, k or v does not have the shape's size");
  }
  const DeviceBuffer dq = upload(q), dk = upload(k), dv = upload(v);
  DeviceBuffer dout(static_cast<size_t>(shape.q_values()) * sizeof(float)), dlse(static_cast<size_t>(shape.states()) * sizeof(float));
  cuda::partial_attention(shape, dtype, dq.as<std::uint16_t>(), dk.as<std::uint16_t>(), dv.as<std::uint16_t>(), tokens,
                    dout.as<float>(), dlse.as<float>(), splits);
  o.resize(static_cast<size_t>(shape.q_values()));
  lse.resize(static_cast<size_t>(shape.states()));
  check(cudaMemcpy(o.data(), dout.pointer, o.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(lse.data(), dlse.pointer, lse.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

std::vector<double> time_copy(double bytes, int warmup, int iterations) {
  const auto size = static_cast<size_t>(bytes);
  const int copies = rotation_copies(2 * bytes);  // a copy reads and writes
  std::vector<DeviceBuffer> from, to;
  for (int c = 0; c < copies; ++c) {
    from.emplace_back(size);
    to.emplace_back(size);
    check(cudaMemset(from.back().pointer, 1, size), "cudaMemset");
  }
  return event_times(warmup, iterations, 2 * bytes, copies, [&](long long call) {
    const auto c = static_cast<size_t>(call % copies);
    check(cudaMemcpyAsync(to[c].pointer, from[c].pointer, size, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
}

std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup, int iterations) {
  const auto kv = static_cast<size_t>(tokens * shape.kv_values_per_token()) * sizeof(std::uint16_t);
  const int copies = tokens > 0 ? rotation_copies(2.0 * static_cast<double>(kv)) : 1;
  DeviceBuffer q(static_cast<size_t>(shape.q_values()) * 2);
  DeviceBuffer o(static_cast<size_t>(shape.q_values()) * sizeof(float)), lse(static_cast<size_t>(shape.states()) * sizeof(float));
  check(cudaMemset(q.pointer, 0, static_cast<size_t>(shape.q_values()) * 2), "cudaMemset");
  std::vector<DeviceBuffer> k, v;
  for (int c = 0; c < copies; ++c) {
    k.emplace_back(kv);
    v.emplace_back(kv);
    check(cudaMemset(k.back().pointer, 0, kv), "cudaMemset");
    check(cudaMemset(v.back().pointer, 0, kv), "cudaMemset");
  }
  SplitKvAttention kernel;  // its workspace made by the warm-up call, outside the samples
  return event_times(warmup, iterations, 2.0 * static_cast<double>(kv), copies, [&](long long call) {
    const auto c = static_cast<size_t>(call % copies);
    kernel.run(shape, dtype, q.as<std::uint16_t>(), k[c].as<std::uint16_t>(), v[c].as<std::uint16_t>(), tokens, o.as<float>(),
               lse.as<float>());
  });
}

}  // namespace treering::realrun::cuda
