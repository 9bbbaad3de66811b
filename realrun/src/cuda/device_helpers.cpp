// Host-side helpers of cuda_attention.hpp: copies for tests, and CUDA-graph timings (batched calls over rotating
// random inputs, bench.hpp's plan_gpu_timing).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "device_inputs.hpp"
#include "graph_timing.hpp"
#include "treering/realrun/bench.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/input_hash.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda {
namespace {

using detail::check;

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
  T* as() const {
    return static_cast<T*>(pointer);
  }
};

template <typename T>
DeviceBuffer upload(const std::vector<T>& values) {
  DeviceBuffer buffer(values.size() * sizeof(T));
  if (!values.empty())
    check(cudaMemcpy(buffer.pointer, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return buffer;
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
                                 long long tokens, std::vector<float>& o, std::vector<float>& lse, int splits,
                                 int calls) {
  check_shape(shape);
  const auto kv = static_cast<size_t>(tokens * shape.kv_values_per_token());
  if (q.size() != static_cast<size_t>(shape.q_values()) || k.size() != kv || v.size() != kv) {
    throw std::logic_error("partial_attention_from_host: q, k or v does not have the shape's size");
  }
  const DeviceBuffer dq = upload(q), dk = upload(k), dv = upload(v);
  DeviceBuffer dout(static_cast<size_t>(shape.q_values()) * sizeof(float)),
      dlse(static_cast<size_t>(shape.states()) * sizeof(float));
  if (calls < 1) throw topologies::InputError("partial_attention_from_host: at least one call");
  check(cudaMemset(dout.pointer, 0xFF, static_cast<size_t>(shape.q_values()) * sizeof(float)),
        "cudaMemset");  // NaN: unwritten shows
  SplitKvAttention kernel;
  for (int call = 0; call < calls; ++call) {
    kernel.run(shape, dtype, dq.as<std::uint16_t>(), dk.as<std::uint16_t>(), dv.as<std::uint16_t>(), tokens,
               dout.as<float>(), dlse.as<float>(), splits);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
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
    detail::fill_hashed(from.back().as<std::uint16_t>(), size / 2, 100 + static_cast<std::uint64_t>(c), 0, Dtype::bf16,
                        nullptr);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return detail::graph_times(warmup, iterations, 2 * bytes, copies, [&](long long call, cudaStream_t stream) {
    const auto c = static_cast<size_t>(call % copies);
    check(cudaMemcpyAsync(to[c].pointer, from[c].pointer, size, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  });
}

// Random q, K and V (input_hash.hpp's values, a seed per copy: never zeros, which would hide unwritten outputs and
// can run faster than real data), as many copies of K and V as keep a call's reads out of the L2.
std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup,
                                   int iterations) {
  const auto kv_values = static_cast<size_t>(tokens * shape.kv_values_per_token());
  const int copies = tokens > 0 ? rotation_copies(2.0 * static_cast<double>(kv_values * 2)) : 1;
  DeviceBuffer q(static_cast<size_t>(shape.q_values()) * 2);
  DeviceBuffer o(static_cast<size_t>(shape.q_values()) * sizeof(float)),
      lse(static_cast<size_t>(shape.states()) * sizeof(float));
  detail::fill_hashed(q.as<std::uint16_t>(), static_cast<size_t>(shape.q_values()), q_stream(1), 0, dtype, nullptr);
  std::vector<DeviceBuffer> k, v;
  for (int c = 0; c < copies; ++c) {
    k.emplace_back(kv_values * 2);
    v.emplace_back(kv_values * 2);
    detail::fill_hashed(k.back().as<std::uint16_t>(), kv_values, k_stream(10 + static_cast<std::uint64_t>(c)), 0, dtype,
                        nullptr);
    detail::fill_hashed(v.back().as<std::uint16_t>(), kv_values, v_stream(10 + static_cast<std::uint64_t>(c)), 0, dtype,
                        nullptr);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  SplitKvAttention kernel;  // its workspace made by the warm-up call, outside the samples
  return detail::graph_times(warmup, iterations, 2.0 * static_cast<double>(kv_values * 2), copies,
                             [&](long long call, cudaStream_t stream) {
                               const auto c = static_cast<size_t>(call % copies);
                               kernel.run(shape, dtype, q.as<std::uint16_t>(), k[c].as<std::uint16_t>(),
                                          v[c].as<std::uint16_t>(), tokens, o.as<float>(), lse.as<float>(), 0, stream);
                             });
}

}  // namespace treering::realrun::cuda
