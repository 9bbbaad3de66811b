// The CUDA kernels of cuda_attention.hpp: the split-KV partial attention (its indexing and arithmetic are
// split_kv.hpp's, shared with the CPU emulation in the tests), and the one merge launch of the chunks' states.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/realrun/split_kv.hpp"

namespace treering::realrun::cuda {
namespace {

using namespace split_kv;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// Eight 16-bit values of one 128-bit load to floats (the low half of each 32-bit word is the first value).
template <typename T>
__device__ void unpack(const uint4& raw, float (&out)[kValuesPerLoad]) {
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out[2 * w] = __uint_as_float(words[w] << 16);
      out[2 * w + 1] = __uint_as_float(words[w] & 0xFFFF0000u);
    } else {
      out[2 * w] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[w] & 0xFFFFu)));
      out[2 * w + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[w] >> 16)));
    }
  }
}

// The sum over a lane group (lanes_per_token consecutive lanes): an xor butterfly, which leaves every lane of the
// group with the same bits (each step adds the same two values in either order).
template <int D>
__device__ float group_sum(float value) {
#pragma unroll
  for (int offset = lanes_per_token(D) / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  return value;
}

// One CTA: (sequence, KV head, G query heads) x chunk blockIdx.y of `chunks`. Writes the chunk's state to
// (o_part, lse_part), or, with one chunk, the head's state to (o, lse) directly.
template <typename T, int D, int G>
__global__ void __launch_bounds__(kWarps * kLanes) split_kv_kernel(const T* q, const T* k, const T* v, long long tokens,
                                                                  int query_heads, int kv_heads, int chunks, float q_scale,
                                                                  float* o_part, float* lse_part, float* o, float* lse) {
  constexpr int kGroups = groups_per_cta(D);
  const CtaPlace cta = cta_place(static_cast<int>(blockIdx.x), query_heads, kv_heads);
  const int chunk = static_cast<int>(blockIdx.y);
  const LanePlace place = lane_place(D, static_cast<int>(threadIdx.x) / kLanes, static_cast<int>(threadIdx.x) % kLanes);
  const int batch = static_cast<int>(gridDim.x) / (query_heads / G);
  const long long stride = static_cast<long long>(batch) * kv_heads * D;  // values per token
  const long long row = (static_cast<long long>(cta.sequence) * kv_heads + cta.kv_head) * D + place.first_value;
  float qv[G][kValuesPerLoad], acc[G][kValuesPerLoad], m2[G], l[G];
#pragma unroll
  for (int j = 0; j < G; ++j) {
    const long long state = static_cast<long long>(cta.sequence) * query_heads + cta.first_query_head + j;
    unpack<T>(*reinterpret_cast<const uint4*>(q + state * D + place.first_value), qv[j]);
#pragma unroll
    for (int i = 0; i < kValuesPerLoad; ++i) {
      qv[j][i] *= q_scale;
      acc[j][i] = 0.0f;
    }
    m2[j] = -INFINITY;
    l[j] = 0.0f;
  }
  const TokenRange range = chunk_range(tokens, chunks, chunk);
  for (long long tile = 0; token_at(range.begin, D, tile, 0, 0) < range.end; ++tile) {
    uint4 k_raw[kTokensInFlight], v_raw[kTokensInFlight];
    int valid = 0;  // a prefix of the slots: a group's tokens grow with the slot
#pragma unroll
    for (int u = 0; u < kTokensInFlight; ++u) {  // every load issued before the first is used
      const long long t = token_at(range.begin, D, tile, u, place.group);
      const bool here = t < range.end;
      k_raw[u] = here ? __ldg(reinterpret_cast<const uint4*>(k + t * stride + row)) : make_uint4(0, 0, 0, 0);
      v_raw[u] = here ? __ldg(reinterpret_cast<const uint4*>(v + t * stride + row)) : make_uint4(0, 0, 0, 0);
      valid += here ? 1 : 0;
    }
    float values[kTokensInFlight][kValuesPerLoad];
    float scores[G][kTokensInFlight];
#pragma unroll
    for (int u = 0; u < kTokensInFlight; ++u) {
      float keys[kValuesPerLoad];
      unpack<T>(k_raw[u], keys);
      unpack<T>(v_raw[u], values[u]);
#pragma unroll
      for (int j = 0; j < G; ++j) {
        float partial = 0.0f;
#pragma unroll
        for (int i = 0; i < kValuesPerLoad; ++i) partial += qv[j][i] * keys[i];
        scores[j][u] = group_sum<D>(partial);  // every lane takes part, also those past the chunk's end
      }
    }
#pragma unroll
    for (int j = 0; j < G; ++j) online_softmax_tile(m2[j], l[j], acc[j], scores[j], values, valid);
  }
  __shared__ float shared_m2[kGroups][G], shared_l[kGroups][G], shared_acc[kGroups][G][D];
  __shared__ GroupMerge merges[G];
  const bool first_lane = place.first_value == 0;
#pragma unroll
  for (int j = 0; j < G; ++j) {
    if (first_lane) {
      shared_m2[place.group][j] = m2[j];
      shared_l[place.group][j] = l[j];
    }
#pragma unroll
    for (int i = 0; i < kValuesPerLoad; ++i) shared_acc[place.group][j][place.first_value + i] = acc[j][i];
  }
  __syncthreads();
  if (threadIdx.x < G) merges[threadIdx.x] = merge_groups(&shared_m2[0][threadIdx.x], &shared_l[0][threadIdx.x], kGroups, G);
  __syncthreads();
  for (int e = static_cast<int>(threadIdx.x); e < G * D; e += kWarps * kLanes) {
    const int j = e / D, i = e % D;
    float value = 0.0f;
    for (int g = 0; g < kGroups; ++g) value += merges[j].weight(shared_m2[g][j], shared_l[g][j]) * shared_acc[g][j][i];
    const long long state = static_cast<long long>(cta.sequence) * query_heads + cta.first_query_head + j;
    if (chunks == 1) {
      o[state * D + i] = value;
      if (i == 0) lse[state] = merges[j].lse();
    } else {
      const long long part = state * chunks + chunk;
      o_part[part * D + i] = value;
      if (i == 0) lse_part[part] = merges[j].lse();
    }
  }
}

// Thread i of block `state` merges element i of the chunks' states (merge.hpp's many-state form: the merged lse
// first, then each chunk's o weighted by exp(lse_s - lse), independent loads).
__global__ void merge_kernel(const float* o_part, const float* lse_part, int splits, int head_dim, float* o, float* lse) {
  const int state = static_cast<int>(blockIdx.x), i = static_cast<int>(threadIdx.x);
  const long long first = static_cast<long long>(state) * splits;
  const float merged = merged_lse(lse_part + first, splits);
  float value = 0.0f;
#pragma unroll 4
  for (int s = 0; s < splits; ++s) value += state_weight(lse_part[first + s], merged) * o_part[(first + s) * head_dim + i];
  o[static_cast<long long>(state) * head_dim + i] = value;
  if (i == 0) lse[state] = merged;
}

// The kernel for a shape and dtype: its launcher (typed arguments) and its address (for the occupancy query).
struct KernelArgs {
  const std::uint16_t *q, *k, *v;
  long long tokens;
  int query_heads, kv_heads, chunks;
  float q_scale;
  float *o_part, *lse_part, *o, *lse;
};
struct Kernel {
  void (*launch)(const KernelArgs&, dim3, cudaStream_t);
  const void* function;
};

template <typename T, int D, int G>
void launch_kernel(const KernelArgs& a, dim3 grid, cudaStream_t stream) {
  split_kv_kernel<T, D, G><<<grid, kWarps * kLanes, 0, stream>>>(
      reinterpret_cast<const T*>(a.q), reinterpret_cast<const T*>(a.k), reinterpret_cast<const T*>(a.v), a.tokens, a.query_heads,
      a.kv_heads, a.chunks, a.q_scale, a.o_part, a.lse_part, a.o, a.lse);
}

template <typename T, int D>
Kernel kernel_for_heads(int heads) {
  switch (heads) {
    case 8: return {&launch_kernel<T, D, 8>, reinterpret_cast<const void*>(&split_kv_kernel<T, D, 8>)};
    case 4: return {&launch_kernel<T, D, 4>, reinterpret_cast<const void*>(&split_kv_kernel<T, D, 4>)};
    case 2: return {&launch_kernel<T, D, 2>, reinterpret_cast<const void*>(&split_kv_kernel<T, D, 2>)};
    default: return {&launch_kernel<T, D, 1>, reinterpret_cast<const void*>(&split_kv_kernel<T, D, 1>)};
  }
}

Kernel pick_kernel(const AttentionShape& shape, Dtype dtype) {
  const int heads = heads_per_cta(shape.query_heads, shape.kv_heads);
  if (dtype == Dtype::bf16) return shape.head_dim == 64 ? kernel_for_heads<__nv_bfloat16, 64>(heads) : kernel_for_heads<__nv_bfloat16, 128>(heads);
  return shape.head_dim == 64 ? kernel_for_heads<__half, 64>(heads) : kernel_for_heads<__half, 128>(heads);
}

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

}  // namespace

struct SplitKvAttention::Impl {
  int sms = 1;
  float* o_part = nullptr;
  float* lse_part = nullptr;
  size_t parts = 0;  // chunk states the workspace holds
  int head_dim = 0;
  ~Impl() {
    cudaFree(o_part);
    cudaFree(lse_part);
  }
  void reserve(size_t wanted, int d) {  // grown outside any timed call's steady state: the first call of a size
    if (wanted <= parts && d <= head_dim) return;
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the old workspace may still be read
    cudaFree(o_part);
    cudaFree(lse_part);
    o_part = lse_part = nullptr;
    parts = 0;
    check(cudaMalloc(reinterpret_cast<void**>(&o_part), wanted * static_cast<size_t>(d) * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(reinterpret_cast<void**>(&lse_part), wanted * sizeof(float)), "cudaMalloc");
    parts = wanted;
    head_dim = d;
  }
};

SplitKvAttention::SplitKvAttention() : impl_(std::make_unique<Impl>()) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&impl_->sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
}

SplitKvAttention::~SplitKvAttention() = default;

int SplitKvAttention::chunks_for(const AttentionShape& shape, Dtype dtype, long long tokens) const {
  int resident = 1;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, pick_kernel(shape, dtype).function, kWarps * kLanes, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  const long long ctas = static_cast<long long>(shape.batch) * shape.query_heads / heads_per_cta(shape.query_heads, shape.kv_heads);
  return choose_chunks(impl_->sms, resident < 1 ? 1 : resident, ctas, tokens);
}

void SplitKvAttention::run(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                           const std::uint16_t* v, long long tokens, float* o, float* lse, int splits, void* stream_pointer) {
  check_shape(shape);
  if (shape.head_dim != 64 && shape.head_dim != 128) throw std::invalid_argument("the CUDA kernel takes head dims 64 and 128");
  if (tokens < 0) throw std::invalid_argument("partial_attention: a negative number of tokens");
  if (!aligned16(q) || (tokens > 0 && (!aligned16(k) || !aligned16(v)))) {
    throw std::invalid_argument("partial_attention: q, K and V must be 16-byte aligned (128-bit loads)");
  }
  if (splits > kMaxChunks) throw std::invalid_argument("at most 65,535 chunks per head (the grid's y dimension)");
  auto stream = static_cast<cudaStream_t>(stream_pointer);
  const int chunks = splits > 0 ? splits : chunks_for(shape, dtype, tokens);
  if (chunks > 1) impl_->reserve(static_cast<size_t>(shape.states()) * static_cast<size_t>(chunks), shape.head_dim);
  const long long ctas = static_cast<long long>(shape.batch) * shape.query_heads / heads_per_cta(shape.query_heads, shape.kv_heads);
  const dim3 grid(static_cast<unsigned>(ctas), static_cast<unsigned>(chunks));
  const float q_scale = kLog2e / std::sqrt(static_cast<float>(shape.head_dim));
  pick_kernel(shape, dtype).launch({q, k, v, tokens, shape.query_heads, shape.kv_heads, chunks, q_scale, impl_->o_part,
                                    impl_->lse_part, o, lse}, grid, stream);
  if (chunks > 1) {
    merge_kernel<<<static_cast<unsigned>(shape.states()), static_cast<unsigned>(shape.head_dim), 0, stream>>>(
        impl_->o_part, impl_->lse_part, chunks, shape.head_dim, o, lse);
  }
  check(cudaGetLastError(), "attention kernels");
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
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");  // before the workspace goes
}

}  // namespace treering::realrun::cuda
