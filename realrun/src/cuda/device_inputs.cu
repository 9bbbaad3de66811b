// device_inputs.hpp: one thread per value, a grid-stride loop. CUDA's round-to-nearest-even conversions give the
// bits half.hpp's to_half gives on the host (subnormals included), so the device's inputs equal make_inputs'.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "device_inputs.hpp"
#include "treering/realrun/input_hash.hpp"

namespace treering::realrun::cuda::detail {
namespace {

__global__ void fill_kernel(std::uint16_t* values, std::size_t count, std::uint64_t stream_id, std::uint64_t first,
                            bool bf16) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float value = hashed_value(stream_id, first + i);
    values[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(value)) : __half_as_ushort(__float2half_rn(value));
  }
}

}  // namespace

void fill_hashed(std::uint16_t* values, std::size_t count, std::uint64_t stream_id, std::uint64_t first, Dtype dtype,
                 cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = (count + 255) / 256;
  fill_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(values, count, stream_id,
                                                                                          first, dtype == Dtype::bf16);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string("fill_hashed: ") + cudaGetErrorString(status));
}

}  // namespace treering::realrun::cuda::detail
