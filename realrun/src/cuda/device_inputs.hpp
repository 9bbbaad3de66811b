// Inputs made on the device (input_hash.hpp's values, bit for bit the host's make_inputs): a long context's K/V
// never passes through host memory. Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "treering/realrun/half.hpp"

namespace treering::realrun::cuda::detail {

// values[i] = the 16-bit rounding (nearest even) of hashed_value(stream_id, first + i), i < count; on `stream`.
void fill_hashed(std::uint16_t* values, std::size_t count, std::uint64_t stream_id, std::uint64_t first, Dtype dtype,
                 cudaStream_t stream);

}  // namespace treering::realrun::cuda::detail
