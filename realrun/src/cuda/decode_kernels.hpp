// Launchers of the cuda backend's small decode kernels (decode_kernels.cu). Device pointers; streams as void*.
// Private to realrun.
#pragma once

#include <cstddef>

namespace treering::realrun::cuda::detail {

void numerators(const float* o, const float* lse, const float* top, int states, int d, float* numerator,
                float* denominator, void* stream);
void divide(const float* numerator, const float* denominator, int states, int d, float* o, void* stream);
void merge_into(float* o, float* lse, const float* o_in, const float* lse_in, int states, int d, void* stream);
void gathered_merge(const float* all, int ranks, int states, int d, float* o, void* stream);
void reduce_into(float* data, const float* incoming, std::size_t count, bool max, void* stream);

}  // namespace treering::realrun::cuda::detail
