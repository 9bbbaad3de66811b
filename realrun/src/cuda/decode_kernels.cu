// The small kernels of the cuda backend's decode (cuda_decode.hpp): the tree's numerators and division, a
// state merged into another, and the merge of all-gathered states. One block per (sequence, head), one thread
// per head-dim element; the rule is merge.hpp's.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "decode_kernels.hpp"
#include "treering/realrun/merge.hpp"

namespace treering::realrun::cuda::detail {
namespace {

// numerator = o e^(lse - top), denominator = e^(lse - top) (0 for an empty state).
__global__ void numerator_kernel(const float* o, const float* lse, const float* top, int d, float* numerator,
                                 float* denominator) {
  const int s = blockIdx.x, i = threadIdx.x;
  const float weight = lse[s] == -INFINITY ? 0.0f : expf(lse[s] - top[s]);
  numerator[static_cast<long long>(s) * d + i] = o[static_cast<long long>(s) * d + i] * weight;
  if (i == 0) denominator[s] = weight;
}

__global__ void divide_kernel(const float* numerator, const float* denominator, int d, float* o) {
  const int s = blockIdx.x, i = threadIdx.x;
  // Every rank's state empty (no tokens anywhere): o 0, as merge_into and gathered_merge leave it, not 0/0.
  o[static_cast<long long>(s) * d + i] =
      denominator[s] > 0.0f ? numerator[static_cast<long long>(s) * d + i] / denominator[s] : 0.0f;
}

// (o, lse) <- merge((o, lse), (o_in, lse_in)): every thread reads both lse before thread 0 writes the new one.
__global__ void merge_into_kernel(float* o, float* lse, const float* o_in, const float* lse_in, int d) {
  const int s = blockIdx.x, i = threadIdx.x;
  const MergeWeights w = merge_weights(lse[s], lse_in[s]);
  const long long at = static_cast<long long>(s) * d + i;
  o[at] = w.a * o[at] + w.b * o_in[at];
  __syncthreads();
  if (i == 0) lse[s] = w.lse;
}

// `all` holds `ranks` blocks of [o (states x d) | lse (states)]; o <- their merge.
__global__ void gathered_merge_kernel(const float* all, int ranks, int states, int d, float* o) {
  const int s = blockIdx.x, i = threadIdx.x;
  const long long block = static_cast<long long>(states) * (d + 1);
  const float* lse = all + static_cast<long long>(states) * d + s;
  const float merged = merged_lse(lse, ranks, block);
  float value = 0.0f;
  for (int r = 0; r < ranks; ++r)
    value += state_weight(lse[r * block], merged) * all[r * block + static_cast<long long>(s) * d + i];
  o[static_cast<long long>(s) * d + i] = value;
}

// data[i] <- data[i] + incoming[i] (or the larger of the two): a loopback ring's reduce step.
__global__ void reduce_into_kernel(float* data, const float* incoming, size_t count, bool max) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) data[i] = max ? fmaxf(data[i], incoming[i]) : data[i] + incoming[i];
}

}  // namespace

void launched(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

void numerators(const float* o, const float* lse, const float* top, int states, int d, float* numerator,
                float* denominator, void* stream) {
  numerator_kernel<<<states, d, 0, static_cast<cudaStream_t>(stream)>>>(o, lse, top, d, numerator, denominator);
  launched("numerator kernel");
}
void divide(const float* numerator, const float* denominator, int states, int d, float* o, void* stream) {
  divide_kernel<<<states, d, 0, static_cast<cudaStream_t>(stream)>>>(numerator, denominator, d, o);
  launched("divide kernel");
}
void merge_into(float* o, float* lse, const float* o_in, const float* lse_in, int states, int d, void* stream) {
  merge_into_kernel<<<states, d, 0, static_cast<cudaStream_t>(stream)>>>(o, lse, o_in, lse_in, d);
  launched("merge kernel");
}
void gathered_merge(const float* all, int ranks, int states, int d, float* o, void* stream) {
  gathered_merge_kernel<<<states, d, 0, static_cast<cudaStream_t>(stream)>>>(all, ranks, states, d, o);
  launched("gathered merge kernel");
}

void reduce_into(float* data, const float* incoming, size_t count, bool max, void* stream) {
  if (count == 0) return;
  const auto blocks = static_cast<unsigned>((count + 255) / 256);
  reduce_into_kernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(data, incoming, count, max);
  launched("reduce kernel");
}

}  // namespace treering::realrun::cuda::detail
