// The CUDA kernels of cuda_attention.hpp: split-KV partial attention, and the merge of the chunks' states.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/merge.hpp"

namespace treering::realrun::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kLanes = 32;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

__device__ float to_float(__nv_bfloat16 value) { return __bfloat162float(value); }
__device__ float to_float(__half value) { return __half2float(value); }

__device__ float warp_sum(float value) {
  for (int offset = kLanes / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  return value;
}

// Block (state, chunk): warps take tokens begin + w, begin + w + 4, ...; lane l holds head-dim elements
// [l * VPT, (l + 1) * VPT). Each warp keeps an online softmax (max m, denominator l, accumulator); the 4 are
// merged through shared memory and the chunk's normalised o and lse written out.
template <typename T, int VPT>
__global__ void partial_kernel(const T* q, const T* k, const T* v, long long tokens, int query_heads, int kv_heads,
                               int splits, float scale, float* o_part, float* lse_part) {
  constexpr int d = VPT * kLanes;
  const int state = blockIdx.x;  // b * n_h + h
  const int chunk = blockIdx.y;
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int b = state / query_heads, h = state % query_heads;
  const int kv_head = h / (query_heads / kv_heads);
  const long long stride = static_cast<long long>(gridDim.x / query_heads) * kv_heads * d;  // values per token
  const long long offset = (static_cast<long long>(b) * kv_heads + kv_head) * d + lane * VPT;
  const long long per_chunk = (tokens + splits - 1) / splits;
  const long long begin = chunk * per_chunk, end = min(tokens, begin + per_chunk);
  float qv[VPT], acc[VPT];
  for (int i = 0; i < VPT; ++i) {
    qv[i] = to_float(q[static_cast<long long>(state) * d + lane * VPT + i]) * scale;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (long long t = begin + warp; t < end; t += kWarps) {
    float partial = 0.0f;
    for (int i = 0; i < VPT; ++i) partial += qv[i] * to_float(k[t * stride + offset + i]);
    const float score = warp_sum(partial);
    const float top = fmaxf(m, score);
    const float rescale = expf(m - top), weight = expf(score - top);
    l = l * rescale + weight;
    for (int i = 0; i < VPT; ++i) acc[i] = acc[i] * rescale + weight * to_float(v[t * stride + offset + i]);
    m = top;
  }
  __shared__ float shared_m[kWarps], shared_l[kWarps], shared_acc[kWarps][d];
  if (lane == 0) {
    shared_m[warp] = m;
    shared_l[warp] = l;
  }
  for (int i = 0; i < VPT; ++i) shared_acc[warp][lane * VPT + i] = acc[i];
  __syncthreads();
  if (warp != 0) return;
  float top = -INFINITY;
  for (int w = 0; w < kWarps; ++w) top = fmaxf(top, shared_m[w]);
  float total = 0.0f;
  for (int w = 0; w < kWarps; ++w) total += shared_l[w] > 0.0f ? shared_l[w] * expf(shared_m[w] - top) : 0.0f;
  const long long out = static_cast<long long>(state) * splits + chunk;
  for (int i = 0; i < VPT; ++i) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += shared_l[w] > 0.0f ? shared_acc[w][lane * VPT + i] * expf(shared_m[w] - top) : 0.0f;
    o_part[out * d + lane * VPT + i] = total > 0.0f ? sum / total : 0.0f;
  }
  if (lane == 0) lse_part[out] = total > 0.0f ? top + logf(total) : -INFINITY;
}

// Thread i of block `state` merges element i of the chunks' states (merge.hpp's many-state form: the merged lse
// first, then each chunk's o weighted by exp(lse_s - lse), independent loads).
__global__ void merge_kernel(const float* o_part, const float* lse_part, int splits, int head_dim, float* o, float* lse) {
  const int state = blockIdx.x, i = threadIdx.x;
  const long long first = static_cast<long long>(state) * splits;
  const float merged = merged_lse(lse_part + first, splits);
  float value = 0.0f;
#pragma unroll 4
  for (int s = 0; s < splits; ++s) value += state_weight(lse_part[first + s], merged) * o_part[(first + s) * head_dim + i];
  o[static_cast<long long>(state) * head_dim + i] = value;
  if (i == 0) lse[state] = merged;
}

template <typename T, int VPT>
void launch(const AttentionShape& s, const void* q, const void* k, const void* v, long long tokens, float* o_part,
            float* lse_part, int splits, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(s.states()), static_cast<unsigned>(splits));
  partial_kernel<T, VPT><<<grid, kWarps * kLanes, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), tokens, s.query_heads, s.kv_heads,
      splits, 1.0f / sqrtf(static_cast<float>(s.head_dim)), o_part, lse_part);
}

int default_splits(const AttentionShape& shape, long long tokens) {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const long long wanted = (16LL * sms + shape.states() - 1) / shape.states();  // ~16 blocks (64 warps) per SM
  const long long useful = (tokens + 255) / 256;                               // at least 256 tokens per chunk
  return static_cast<int>(std::max(1LL, std::min({wanted, std::max(1LL, useful), 65535LL})));
}

// The chunks' states, freed on the stream when it goes (also when a launch throws).
struct Workspace {
  float* o_part = nullptr;
  float* lse_part = nullptr;
  cudaStream_t stream;
  Workspace(size_t parts, int head_dim, cudaStream_t s) : stream(s) {
    static const bool pool_kept = [] {  // keep freed memory in the pool: no re-mapping inside timed calls
      cudaMemPool_t pool;
      int device = 0;
      cudaGetDevice(&device);
      if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) return false;
      std::uint64_t keep = UINT64_MAX;
      return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    }();
    (void)pool_kept;
    check(cudaMallocAsync(reinterpret_cast<void**>(&o_part), parts * static_cast<size_t>(head_dim) * sizeof(float), stream), "cudaMallocAsync");
    check(cudaMallocAsync(reinterpret_cast<void**>(&lse_part), parts * sizeof(float), stream), "cudaMallocAsync");
  }
  ~Workspace() {
    if (o_part) cudaFreeAsync(o_part, stream);
    if (lse_part) cudaFreeAsync(lse_part, stream);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
};

}  // namespace

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
                       const std::uint16_t* v, long long tokens, float* o, float* lse, int splits, void* stream_pointer) {
  check_shape(shape);
  if (shape.head_dim != 64 && shape.head_dim != 128) throw std::invalid_argument("the CUDA kernel takes head dims 64 and 128");
  if (tokens < 0) throw std::invalid_argument("partial_attention: a negative number of tokens");
  auto stream = static_cast<cudaStream_t>(stream_pointer);
  if (splits <= 0) splits = default_splits(shape, tokens);
  if (splits > 65535) throw std::invalid_argument("at most 65,535 chunks per head (the grid's y dimension)");
  const Workspace work(static_cast<size_t>(shape.states()) * static_cast<size_t>(splits), shape.head_dim, stream);
  const bool bf16 = dtype == Dtype::bf16;
  if (shape.head_dim == 64) {
    bf16 ? launch<__nv_bfloat16, 2>(shape, q, k, v, tokens, work.o_part, work.lse_part, splits, stream)
         : launch<__half, 2>(shape, q, k, v, tokens, work.o_part, work.lse_part, splits, stream);
  } else {
    bf16 ? launch<__nv_bfloat16, 4>(shape, q, k, v, tokens, work.o_part, work.lse_part, splits, stream)
         : launch<__half, 4>(shape, q, k, v, tokens, work.o_part, work.lse_part, splits, stream);
  }
  merge_kernel<<<static_cast<unsigned>(shape.states()), static_cast<unsigned>(shape.head_dim), 0, stream>>>(
      work.o_part, work.lse_part, splits, shape.head_dim, o, lse);
  check(cudaGetLastError(), "attention kernels");
}

}  // namespace treering::realrun::cuda
