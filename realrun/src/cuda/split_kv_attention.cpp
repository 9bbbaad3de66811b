// The host side of cuda_attention.hpp's kernel: shape checks, the chunk count, the workspace, the launch. Device
// facts (SM count, each instantiation's shared-memory limit and occupancy) are asked once per SplitKvAttention and
// kept, so that a call does no host query: it can be captured in a CUDA graph and times only the device.
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention_kernel.hpp"
#include "device_memory.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/split_kv.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda {
namespace {

using detail::check;

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

long long cta_rows(const AttentionShape& shape) {
  return static_cast<long long>(shape.batch) * shape.kv_heads *
         split_kv::head_blocks(shape.query_heads, shape.kv_heads);
}

int entry_index(Dtype dtype, int head_dim) { return (dtype == Dtype::bf16 ? 0 : 2) + (head_dim == 64 ? 0 : 1); }

}  // namespace

struct SplitKvAttention::Impl {
  int sms = 1;
  std::array<int, 4> resident{};  // CTAs an SM holds, per instantiation; 0 until asked
  float* o_part = nullptr;
  float* lse_part = nullptr;
  unsigned* arrivals = nullptr;
  size_t parts = 0;  // chunk states the workspace holds
  int head_dim = 0;  // ... of this head dim
  size_t arrival_slots = 0;

  ~Impl() {
    cudaFree(o_part);
    cudaFree(lse_part);
    cudaFree(arrivals);
  }

  // The instantiation's dynamic shared-memory limit raised (above 48 KB needs it) and its occupancy, once.
  int resident_for(Dtype dtype, int d) {
    int& count = resident[static_cast<size_t>(entry_index(dtype, d))];
    if (count > 0) return count;
    const KernelEntry entry = kernel_entry(dtype, d);
    check(cudaFuncSetAttribute(entry.function, cudaFuncAttributeMaxDynamicSharedMemorySize, entry.shared_bytes),
          "cudaFuncSetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, entry.function, split_kv::kWarps * split_kv::kLanes,
                                                        static_cast<size_t>(entry.shared_bytes)),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (count < 1)
      throw std::runtime_error("the attention kernel does not fit an SM of this device (" +
                               std::to_string(entry.shared_bytes) + " B of shared memory)");
    return count;
  }

  // Grown outside any timed call's steady state (the first call of a size); the arrival counts start at 0.
  void reserve(size_t wanted_parts, int d, size_t wanted_slots) {
    if (wanted_parts <= parts && d <= head_dim && wanted_slots <= arrival_slots) return;
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the old workspace may still be read
    cudaFree(o_part);
    cudaFree(lse_part);
    cudaFree(arrivals);
    o_part = lse_part = nullptr;
    arrivals = nullptr;
    parts = arrival_slots = 0;
    check(cudaMalloc(reinterpret_cast<void**>(&o_part), wanted_parts * static_cast<size_t>(d) * sizeof(float)),
          "cudaMalloc");
    check(cudaMalloc(reinterpret_cast<void**>(&lse_part), wanted_parts * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(reinterpret_cast<void**>(&arrivals), wanted_slots * sizeof(unsigned)), "cudaMalloc");
    check(cudaMemset(arrivals, 0, wanted_slots * sizeof(unsigned)), "cudaMemset");
    parts = wanted_parts;
    head_dim = d;
    arrival_slots = wanted_slots;
  }
};

SplitKvAttention::SplitKvAttention() : impl_(std::make_unique<Impl>()) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&impl_->sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
}

SplitKvAttention::~SplitKvAttention() = default;

int SplitKvAttention::chunks_for(const AttentionShape& shape, Dtype dtype, long long tokens) const {
  return split_kv::choose_chunks(impl_->sms, impl_->resident_for(dtype, shape.head_dim), cta_rows(shape), tokens,
                                 shape.head_dim);
}

void SplitKvAttention::run(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                           const std::uint16_t* v, long long tokens, float* o, float* lse, int splits, void* stream) {
  check_shape(shape);
  if (shape.head_dim != 64 && shape.head_dim != 128)
    throw topologies::InputError("the CUDA kernel takes head dims 64 and 128");
  if (tokens < 0) throw topologies::InputError("partial_attention: a negative number of tokens");
  if (!aligned16(q) || (tokens > 0 && (!aligned16(k) || !aligned16(v)))) {
    throw std::logic_error("partial_attention: q, K and V must be 16-byte aligned (cp.async copies 16 bytes)");
  }
  if (splits > split_kv::kMaxChunks)
    throw topologies::InputError("at most 65,535 chunks per head (the grid's y dimension)");
  const long long rows = cta_rows(shape);
  if (rows > 0x7FFFFFFFLL)
    throw topologies::InputError("partial_attention: more than 2^31 - 1 CTAs in the grid's x dimension");
  const int chunks = splits > 0 ? splits : chunks_for(shape, dtype, tokens);
  impl_->resident_for(dtype, shape.head_dim);  // the shared-memory limit, before the first launch
  if (chunks > 1) {
    const size_t parts = static_cast<size_t>(shape.states()) * static_cast<size_t>(chunks);
    if (parts > impl_->parts || shape.head_dim > impl_->head_dim || static_cast<size_t>(rows) > impl_->arrival_slots) {
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      check(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capturing), "cudaStreamIsCapturing");
      if (capturing != cudaStreamCaptureStatusNone) {
        throw std::logic_error(
            "the attention workspace must grow inside a graph capture: call it once with this size before capturing");
      }
    }
    impl_->reserve(parts, shape.head_dim, static_cast<size_t>(rows));
  }
  KernelArgs args;
  args.tokens = tokens;
  args.query_heads = shape.query_heads;
  args.kv_heads = shape.kv_heads;
  args.chunks = chunks;
  args.scale_log2 = split_kv::kLog2e / std::sqrt(static_cast<float>(shape.head_dim));
  args.o_part = impl_->o_part;
  args.lse_part = impl_->lse_part;
  args.arrivals = impl_->arrivals;
  args.o = o;
  args.lse = lse;
  kernel_entry(dtype, shape.head_dim)
      .launch(q, k, v, args, static_cast<unsigned>(rows), static_cast<cudaStream_t>(stream));
  check(cudaGetLastError(), "the attention kernel");
}

bool available(std::string& why) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(status);
    return false;
  }
  if (devices == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

std::string device_name() {
  std::string why;
  if (!available(why)) return "";
  int device = 0;
  cudaDeviceProp properties{};
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&properties, device);
  return properties.name;
}

void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse, int splits, void* stream) {
  SplitKvAttention kernel;
  kernel.run(shape, dtype, q, k, v, tokens, o, lse, splits, stream);
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
        "cudaStreamSynchronize");  // before the workspace goes
}

}  // namespace treering::realrun::cuda
