// step_kernels.hpp: one CTA per row (norms, argmax) or one thread per value (the element-wise kernels).
#include <cuda_bf16.h>

#include <cfloat>
#include <stdexcept>
#include <string>

#include "step_kernels.hpp"
#include "treering/realrun/input_hash.hpp"

namespace treering::realrun::cuda::detail {
namespace {

__device__ float load(const bf16_bits* p, std::size_t i) { return __bfloat162float(__ushort_as_bfloat16(p[i])); }
__device__ void store(bf16_bits* p, std::size_t i, float value) {
  p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

void launched(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

unsigned blocks_for(std::size_t count, unsigned threads) {
  const std::size_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

__global__ void fill_kernel(bf16_bits* values, std::size_t count, std::uint64_t stream_id, float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    store(values, i, hashed_value(stream_id, i) * scale);
  }
}

// The block's sum of `value` (blockDim.x a multiple of 32, at most 1024).
__device__ float block_sum(float value) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  value = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;  // every thread has it
}

// One CTA per row, 16-byte loads (8 values; hidden a multiple of 8): a row of 4,096 is 2 loads a thread, not 16
// dependent 2-byte ones, so the kernel costs about its launch whatever the hidden size.
__device__ float2 pair(const uint4& v, int j) {
  return __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(&v)[j]);
}

__global__ void rms_norm_kernel(const bf16_bits* x, const bf16_bits* weight, bf16_bits* y, int hidden) {
  const int vectors = hidden / 8;
  const uint4* row = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(blockIdx.x) * hidden);
  const uint4* gain = reinterpret_cast<const uint4*>(weight);
  uint4* out = reinterpret_cast<uint4*>(y + static_cast<std::size_t>(blockIdx.x) * hidden);
  float squares = 0;
  for (int i = threadIdx.x; i < vectors; i += blockDim.x) {
    const uint4 v = row[i];
    for (int j = 0; j < 4; ++j) {
      const float2 f = pair(v, j);
      squares += f.x * f.x + f.y * f.y;
    }
  }
  const float inverse_rms = rsqrtf(block_sum(squares) / hidden + 1e-5f);
  for (int i = threadIdx.x; i < vectors; i += blockDim.x) {
    const uint4 v = row[i], g = gain[i];
    uint4 result;
    __nv_bfloat162* halves = reinterpret_cast<__nv_bfloat162*>(&result);
    for (int j = 0; j < 4; ++j) {
      const float2 f = pair(v, j), w = pair(g, j);
      halves[j] = __floats2bfloat162_rn(f.x * inverse_rms * w.x, f.y * inverse_rms * w.y);
    }
    out[i] = result;
  }
}

// grid (batch, query_heads + 2 kv_heads), head_dim / 2 threads: thread i rotates the pair (i, i + d/2).
__global__ void rope_append_kernel(RopeAppend a) {
  const int b = blockIdx.x, head = blockIdx.y, i = threadIdx.x, half = a.head_dim / 2;
  const long long qkv_width = static_cast<long long>(a.query_heads + 2 * a.kv_heads) * a.head_dim;
  const bf16_bits* in = a.qkv + b * qkv_width + static_cast<long long>(head) * a.head_dim;
  const long long slot = ((a.position * a.batch + b) * a.kv_heads) * a.head_dim;
  if (head >= a.query_heads + a.kv_heads) {  // v: appended as it is
    const int v_head = head - a.query_heads - a.kv_heads;
    a.v_cache[slot + v_head * a.head_dim + i] = in[i];
    a.v_cache[slot + v_head * a.head_dim + i + half] = in[i + half];
    return;
  }
  const float angle = static_cast<float>(a.position) * powf(a.theta, -2.0f * i / a.head_dim);
  float sine, cosine;
  sincosf(angle, &sine, &cosine);
  const float x0 = load(in, i), x1 = load(in, i + half);
  bf16_bits* out = head < a.query_heads ? a.q + (static_cast<long long>(b) * a.query_heads + head) * a.head_dim
                                        : a.k_cache + slot + static_cast<long long>(head - a.query_heads) * a.head_dim;
  store(out, i, x0 * cosine - x1 * sine);
  store(out, i + half, x1 * cosine + x0 * sine);
}

__global__ void to_bf16_kernel(const float* in, bf16_bits* out, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    store(out, i, in[i]);
  }
}

__global__ void silu_mul_kernel(const bf16_bits* gate_up, bf16_bits* a, int rows, int width) {
  const std::size_t count = static_cast<std::size_t>(rows) * width;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = i / width, column = i % width;
    const float gate = load(gate_up, row * 2 * width + column), up = load(gate_up, row * 2 * width + width + column);
    store(a, i, gate / (1.0f + __expf(-gate)) * up);
  }
}

__global__ void allreduce_add_kernel(RankPointers ranks, int rank_count, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int r = 0; r < rank_count; ++r) sum += load(ranks.partial[r], i);
    for (int r = 0; r < rank_count; ++r) store(ranks.x[r], i, load(ranks.x[r], i) + sum);
  }
}

__global__ void argmax_kernel(const bf16_bits* logits, int vocab, int* next) {
  __shared__ float best_values[1024];
  __shared__ int best_indices[1024];
  const bf16_bits* row = logits + static_cast<std::size_t>(blockIdx.x) * vocab;
  float best = -FLT_MAX;
  int index = vocab;
  for (int v = threadIdx.x; v < vocab; v += blockDim.x) {
    const float value = load(row, v);
    if (value > best) best = value, index = v;  // v rises: ties keep the lower index
  }
  best_values[threadIdx.x] = best;
  best_indices[threadIdx.x] = index;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const float other = best_values[threadIdx.x + stride];
      const int other_index = best_indices[threadIdx.x + stride];
      if (other > best_values[threadIdx.x] ||
          (other == best_values[threadIdx.x] && other_index < best_indices[threadIdx.x])) {
        best_values[threadIdx.x] = other;
        best_indices[threadIdx.x] = other_index;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) next[blockIdx.x] = best_indices[0] < vocab ? best_indices[0] : 0;
}

}  // namespace

void fill_uniform(bf16_bits* values, std::size_t count, std::uint64_t stream_id, float scale, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(values, count, stream_id, scale);
  launched("fill_uniform");
}

void rms_norm(const bf16_bits* x, const bf16_bits* weight, bf16_bits* y, int rows, int hidden, cudaStream_t stream) {
  if (hidden % 8 != 0) throw std::logic_error("rms_norm: hidden must be a multiple of 8 (16-byte loads)");
  rms_norm_kernel<<<static_cast<unsigned>(rows), 256, 0, stream>>>(x, weight, y, hidden);
  launched("rms_norm");
}

void rope_append(const RopeAppend& args, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(args.batch), static_cast<unsigned>(args.query_heads + 2 * args.kv_heads));
  rope_append_kernel<<<grid, static_cast<unsigned>(args.head_dim / 2), 0, stream>>>(args);
  launched("rope_append");
}

void to_bf16(const float* in, bf16_bits* out, std::size_t count, cudaStream_t stream) {
  to_bf16_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(in, out, count);
  launched("to_bf16");
}

void silu_mul(const bf16_bits* gate_up, bf16_bits* a, int rows, int width, cudaStream_t stream) {
  silu_mul_kernel<<<blocks_for(static_cast<std::size_t>(rows) * width, 256), 256, 0, stream>>>(gate_up, a, rows, width);
  launched("silu_mul");
}

void allreduce_add(const RankPointers& ranks, int rank_count, std::size_t count, cudaStream_t stream) {
  if (rank_count < 1 || rank_count > kMaxLoopbackRanks) throw std::logic_error("allreduce_add: 1 to 8 ranks");
  allreduce_add_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(ranks, rank_count, count);
  launched("allreduce_add");
}

void argmax_rows(const bf16_bits* logits, int rows, int vocab, int* next, cudaStream_t stream) {
  argmax_kernel<<<static_cast<unsigned>(rows), 1024, 0, stream>>>(logits, vocab, next);
  launched("argmax_rows");
}

}  // namespace treering::realrun::cuda::detail
