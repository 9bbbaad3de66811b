// Host-side helpers of cuda_attention.hpp: copies for tests, and CUDA-event timings.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

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

// Seconds per call of `body` on the default stream, per iteration, by CUDA events.
template <typename Body>
std::vector<double> event_times(int warmup, int iterations, Body body) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> seconds;
  for (int i = 0; i < warmup + iterations; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    body();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
    if (i >= warmup) seconds.push_back(milliseconds * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
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
  DeviceBuffer from(size), to(size);
  check(cudaMemset(from.pointer, 1, size), "cudaMemset");
  return event_times(warmup, iterations, [&] {
    check(cudaMemcpyAsync(to.pointer, from.pointer, size, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
}

std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup, int iterations) {
  const auto kv = static_cast<size_t>(tokens * shape.kv_values_per_token()) * sizeof(std::uint16_t);
  DeviceBuffer q(static_cast<size_t>(shape.q_values()) * 2), k(kv), v(kv);
  DeviceBuffer o(static_cast<size_t>(shape.q_values()) * sizeof(float)), lse(static_cast<size_t>(shape.states()) * sizeof(float));
  check(cudaMemset(q.pointer, 0, static_cast<size_t>(shape.q_values()) * 2), "cudaMemset");
  check(cudaMemset(k.pointer, 0, kv), "cudaMemset");
  check(cudaMemset(v.pointer, 0, kv), "cudaMemset");
  return event_times(warmup, iterations, [&] {
    cuda::partial_attention(shape, dtype, q.as<std::uint16_t>(), k.as<std::uint16_t>(), v.as<std::uint16_t>(), tokens,
                      o.as<float>(), lse.as<float>());
  });
}

}  // namespace treering::realrun::cuda
