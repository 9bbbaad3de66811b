// The tensor-core split-KV kernel as its host side sees it (attention.cu defines it, split_kv_attention.cpp
// launches it): the arguments every CTA shares and one entry per instantiation. Private to realrun.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "treering/realrun/half.hpp"

namespace treering::realrun::cuda {

struct KernelArgs {
  long long tokens = 0;
  int query_heads = 0, kv_heads = 0, chunks = 1;
  float scale_log2 = 0;                          // log2(e) / sqrt(d): scores in log2 units
  float *o_part = nullptr, *lse_part = nullptr;  // the chunks' states, [state][chunk] (chunks > 1)
  unsigned* arrivals = nullptr;                  // per CTA row: chunks done; 0 between launches (the last resets it)
  float *o = nullptr, *lse = nullptr;
};

struct KernelEntry {
  // Launches ctas x args.chunks CTAs of 128 threads with `shared_bytes` of dynamic shared memory on `stream`.
  void (*launch)(const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v, const KernelArgs& args,
                 unsigned ctas, cudaStream_t stream);
  const void* function;  // for cudaFuncSetAttribute and the occupancy calculator
  int shared_bytes;
};

// bf16 or fp16, head dim 64 or 128 (any other is 128's: the caller checks).
KernelEntry kernel_entry(Dtype dtype, int head_dim);

}  // namespace treering::realrun::cuda
