// Device arrays, streams and events that free themselves, for the cuda backend's decode and benches. Private to
// realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace treering::realrun::cuda::detail {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

template <typename T>
struct Device {  // a device array freed when it goes
  T* data = nullptr;
  size_t size = 0;
  explicit Device(size_t count = 0) : size(count) {
    if (count > 0) check(cudaMalloc(reinterpret_cast<void**>(&data), count * sizeof(T)), "cudaMalloc");
  }
  ~Device() { cudaFree(data); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&& other) noexcept : data(std::exchange(other.data, nullptr)), size(std::exchange(other.size, 0)) {}
  Device& operator=(Device&& other) noexcept {
    std::swap(data, other.data);
    std::swap(size, other.size);
    return *this;
  }
};

struct Event {  // timing-free, destroyed when it goes
  cudaEvent_t handle = nullptr;
  Event() { check(cudaEventCreateWithFlags(&handle, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(handle); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct Stream {  // non-blocking, destroyed when it goes
  cudaStream_t handle = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(handle); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

inline void record(const Event& event, cudaStream_t stream) {
  check(cudaEventRecord(event.handle, stream), "cudaEventRecord");
}
inline void wait(cudaStream_t stream, const Event& event) {
  check(cudaStreamWaitEvent(stream, event.handle, 0), "cudaStreamWaitEvent");
}

}  // namespace treering::realrun::cuda::detail
