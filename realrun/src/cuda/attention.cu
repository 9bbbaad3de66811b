// The CUDA kernel of cuda_attention.hpp: split-KV partial attention on tensor cores (mma.sync.m16n8k16, the query
// heads of a KV head as the MMA's rows), K/V staged per warp through shared memory with cp.async, and the chunks'
// states merged by the last CTA of each head block. Its indexing and arithmetic are split_kv.hpp's, shared with
// the CPU emulation in the tests (realrun/tests/tensor_core_emulation.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "attention_kernel.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/realrun/split_kv.hpp"

namespace treering::realrun::cuda {
namespace {

using namespace split_kv;

// --- PTX wrappers: the instructions split_kv.hpp's fragment maps describe ---------------------------------------

__device__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// 16 bytes from global to shared memory, bypassing L1; `bytes` 0 fills the slot with zeros (a token past the end).
__device__ void copy_async(void* to_shared, const void* from_global, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(to_shared)), "l"(from_global),
               "r"(bytes)
               : "memory");
}
__device__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

__device__ void load_matrices(std::uint32_t (&out)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
               : "r"(shared_address(row)));
}
__device__ void load_matrices_transposed(std::uint32_t (&out)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
               : "r"(shared_address(row)));
}

// c += a b for one 16 x 8 tile, fp32 accumulators.
template <typename T>
__device__ void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, "
        "%2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, "
        "%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two weights as a hi and a lo 16-bit pair (low half: the first): hi = round(p), lo = round(p - hi), so hi + lo
// carries p to ~2^-16 relative (bf16) where hi alone would carry 2^-9.
template <typename T>
__device__ void split_weights(float first, float second, std::uint32_t& hi, std::uint32_t& lo) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 high = __floats2bfloat162_rn(first, second);
    const __nv_bfloat162 low = __floats2bfloat162_rn(first - __low2float(high), second - __high2float(high));
    hi = *reinterpret_cast<const std::uint32_t*>(&high);
    lo = *reinterpret_cast<const std::uint32_t*>(&low);
  } else {
    const __half2 high = __floats2half2_rn(first, second);
    const __half2 low = __floats2half2_rn(first - __low2float(high), second - __high2float(high));
    hi = *reinterpret_cast<const std::uint32_t*>(&high);
    lo = *reinterpret_cast<const std::uint32_t*>(&low);
  }
}

__device__ float quad_max(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xFFFFFFFFu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xFFFFFFFFu, value, 2));
}
__device__ float quad_sum(float value) {
  value += __shfl_xor_sync(0xFFFFFFFFu, value, 1);
  return value + __shfl_xor_sync(0xFFFFFFFFu, value, 2);
}

// --- One warp's running state and its steps ---------------------------------------------------------------------

template <typename T, int D>
struct WarpState {
  static constexpr int kSteps = D / 16;  // k-steps of Q K^T, and head-dim pairs of n-tiles of P V
  std::uint32_t q[kSteps][4];            // A fragments of the block's query rows (zero past its rows)
  float acc[D / 8][4];                   // O, unnormalised, relative to 2^m2 of its row
  float m2[2], l[2];                     // rows lane / 4 and lane / 4 + 8: running max (log2 units), this lane's sum

  __device__ void load_q(const T* q_block, int rows, int lane) {
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int row = a_row(lane, j);
        q[ks][j] =
            row < rows ? *reinterpret_cast<const std::uint32_t*>(q_block + row * D + 16 * ks + a_col(lane, j, 0)) : 0u;
      }
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
    m2[0] = m2[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
  }

  // 16 tokens (rows 16 u ... 16 u + 15 of the staged tile, the first of them token `first`; those at or past `end`
  // are masked): S = Q K^T, the online softmax on S's accumulators, O += (P_hi + P_lo) V.
  __device__ void attend(const T* k_tile, const T* v_tile, int u, long long first, long long end, float scale_log2,
                         int lane) {
    float s[2][4] = {};
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      const TilePlace at = k_matrix_row(ks, u, lane);
      std::uint32_t b[4];
      load_matrices(b, k_tile + swizzled_slot(D, at.row, at.slot) * kValuesPerSlot);
      mma<T>(s[0], q[ks], b[0], b[1]);
      mma<T>(s[1], q[ks], b[2], b[3]);
    }
    float top[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[n][i] = first + 8 * n + accumulator_col(lane, i) < end ? s[n][i] * scale_log2 : -INFINITY;
        top[i / 2] = fmaxf(top[i / 2], s[n][i]);
      }
    }
    RowStep step[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      step[r] = row_step(m2[r], quad_max(top[r]));
      m2[r] = step[r].top;
      l[r] *= step[r].rescale;
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[n][i] *= step[i / 2].rescale;
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[n][i] = exp2f(s[n][i] - step[i / 2].offset);  // now the weight p
        l[i / 2] += s[n][i];
      }
    }
    std::uint32_t hi[4], lo[4];  // A register j: n-tile j / 2, accumulators 2 (j % 2) and 2 (j % 2) + 1
#pragma unroll
    for (int j = 0; j < 4; ++j) split_weights<T>(s[j / 2][2 * (j % 2)], s[j / 2][2 * (j % 2) + 1], hi[j], lo[j]);
#pragma unroll
    for (int np = 0; np < kSteps; ++np) {
      const TilePlace at = v_matrix_row(np, u, lane);
      std::uint32_t b[4];
      load_matrices_transposed(b, v_tile + swizzled_slot(D, at.row, at.slot) * kValuesPerSlot);
      mma<T>(acc[2 * np], hi, b[0], b[1]);
      mma<T>(acc[2 * np], lo, b[0], b[1]);
      mma<T>(acc[2 * np + 1], hi, b[2], b[3]);
      mma<T>(acc[2 * np + 1], lo, b[2], b[3]);
    }
  }
};

// A warp's tile `tile` of the chunk into stage `stage`: K rows then V rows, each slot at its swizzled place.
template <typename T, int D>
__device__ void stage_tile(T* stage, const T* k, const T* v, long long stride, long long head_offset,
                           const TokenRange& range, int warp, long long tile, int lane) {
  const long long first = range.begin + warp_tile_begin(D, warp, tile);
  T* k_tile = stage;
  T* v_tile = stage + warp_tile_tokens(D) * D;
#pragma unroll
  for (int step = 0; step < copy_steps(D); ++step) {
    const TilePlace piece = copy_piece(D, step, lane);
    const bool here = first + piece.row < range.end;
    const long long from = (here ? first + piece.row : first) * stride + head_offset + piece.slot * kValuesPerSlot;
    const int to = swizzled_slot(D, piece.row, piece.slot) * kValuesPerSlot;
    copy_async(k_tile + to, k + from, here ? 16 : 0);
    copy_async(v_tile + to, v + from, here ? 16 : 0);
  }
}

// The CTA's warps' states merged (split_kv::merge_groups) and written: the chunk's state, or with one chunk the
// head's. `warp_o`: each warp's O, [16][D] floats, in its own stages.
template <int D>
__device__ void write_chunk_state(const KernelArgs& a, const CtaPlace& cta, int chunk, const float (&m2)[kWarps][kRows],
                                  const float (&l)[kWarps][kRows], const unsigned char* shared,
                                  GroupMerge (&merges)[kRows]) {
  const int thread = static_cast<int>(threadIdx.x);
  if (thread < kRows) merges[thread] = merge_groups(&m2[0][thread], &l[0][thread], kWarps, kRows);
  __syncthreads();
  for (int e = thread; e < cta.rows * D; e += kWarps * kLanes) {
    const int row = e / D, i = e % D;
    float value = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const auto* warp_o =
          reinterpret_cast<const float*>(shared + static_cast<size_t>(w) * kStages * stage_values(D) * 2);
      value += merges[row].weight(m2[w][row], l[w][row]) * warp_o[row * D + i];
    }
    const long long state = static_cast<long long>(cta.sequence) * a.query_heads + cta.first_query_head + row;
    if (a.chunks == 1) {
      a.o[state * D + i] = value;
      if (i == 0) a.lse[state] = merges[row].lse();
    } else {
      a.o_part[(state * a.chunks + chunk) * D + i] = value;
      if (i == 0) a.lse_part[state * a.chunks + chunk] = merges[row].lse();
    }
  }
}

// After its chunk's state is written: the last CTA of the head block to arrive merges all chunks' states (merge.hpp's
// many-state rule, read through L2: other SMs wrote them) and resets the count for the next launch.
template <int D>
__device__ void merge_chunks_if_last(const KernelArgs& a, const CtaPlace& cta) {
  __shared__ bool last;
  __shared__ float merged[kRows];
  const int thread = static_cast<int>(threadIdx.x);
  __threadfence();
  __syncthreads();
  if (thread == 0) last = atomicAdd(&a.arrivals[blockIdx.x], 1u) == static_cast<unsigned>(a.chunks - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  const long long first_state = static_cast<long long>(cta.sequence) * a.query_heads + cta.first_query_head;
  if (thread < cta.rows) {
    const float* lse = a.lse_part + (first_state + thread) * a.chunks;
    float top = -INFINITY, sum = 0.0f;
    for (int c = 0; c < a.chunks; ++c) top = fmaxf(top, __ldcg(lse + c));
    for (int c = 0; c < a.chunks && top != -INFINITY; ++c) sum += expf(__ldcg(lse + c) - top);
    merged[thread] = top == -INFINITY ? top : top + logf(sum);
  }
  __syncthreads();
  for (int e = thread; e < cta.rows * D; e += kWarps * kLanes) {
    const int row = e / D, i = e % D;
    const long long state = first_state + row;
    float value = 0.0f;
    for (int c = 0; c < a.chunks; ++c) {
      value += state_weight(__ldcg(a.lse_part + state * a.chunks + c), merged[row]) *
               __ldcg(a.o_part + (state * a.chunks + c) * D + i);
    }
    a.o[state * D + i] = value;
    if (i == 0) a.lse[state] = merged[row];
  }
  if (thread == 0) a.arrivals[blockIdx.x] = 0;
}

// One CTA: (sequence, KV head, head block) x chunk blockIdx.y. Dynamic shared memory: split_kv::shared_bytes(D).
template <typename T, int D>
__global__ void __launch_bounds__(kWarps* kLanes, 2) split_kv_kernel(const T* q, const T* k, const T* v, KernelArgs a) {
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ float warp_m2[kWarps][kRows], warp_l[kWarps][kRows];
  __shared__ GroupMerge merges[kRows];
  const int warp = static_cast<int>(threadIdx.x) / kLanes, lane = static_cast<int>(threadIdx.x) % kLanes;
  const CtaPlace cta = cta_place(static_cast<int>(blockIdx.x), a.query_heads, a.kv_heads);
  const int chunk = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(gridDim.x) / (a.kv_heads * head_blocks(a.query_heads, a.kv_heads));
  const long long stride = static_cast<long long>(batch) * a.kv_heads * D;  // values per token
  const long long head_offset = (static_cast<long long>(cta.sequence) * a.kv_heads + cta.kv_head) * D;
  const TokenRange range = chunk_range(a.tokens, a.chunks, chunk, D);
  T* stages = reinterpret_cast<T*>(shared) + static_cast<size_t>(warp) * kStages * stage_values(D);

  WarpState<T, D> state;
  state.load_q(q + (static_cast<long long>(cta.sequence) * a.query_heads + cta.first_query_head) * D, cta.rows, lane);
  const long long tiles = warp_tiles(D, warp, range.end - range.begin);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) stage_tile<T, D>(stages + s * stage_values(D), k, v, stride, head_offset, range, warp, s, lane);
    commit_copies();
  }
  for (long long tile = 0; tile < tiles; ++tile) {
    const long long ahead = tile + kStages - 1;  // into the stage the last iteration read
    if (ahead < tiles)
      stage_tile<T, D>(stages + (ahead % kStages) * stage_values(D), k, v, stride, head_offset, range, warp, ahead,
                       lane);
    commit_copies();
    wait_copies<kStages - 1>();  // this tile's copies are done
    __syncwarp();
    const T* k_tile = stages + (tile % kStages) * stage_values(D);
    const long long first = range.begin + warp_tile_begin(D, warp, tile);
#pragma unroll
    for (int u = 0; u < warp_tile_tokens(D) / 16; ++u) {
      state.attend(k_tile, k_tile + warp_tile_tokens(D) * D, u, first + 16 * u, range.end, a.scale_log2, lane);
    }
    __syncwarp();
  }
  wait_copies<0>();
  __syncwarp();
  // The warp's state: O into its own stages (free now), the rows' max and sum into the CTA's arrays.
  auto* warp_o = reinterpret_cast<float*>(stages);
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      warp_o[accumulator_row(lane, i) * D + 8 * n + accumulator_col(lane, i)] = state.acc[n][i];
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float sum = quad_sum(state.l[r]);
    if (lane % 4 == 0) {
      warp_m2[warp][lane / 4 + 8 * r] = state.m2[r];
      warp_l[warp][lane / 4 + 8 * r] = sum;
    }
  }
  __syncthreads();
  write_chunk_state<D>(a, cta, chunk, warp_m2, warp_l, shared, merges);
  if (a.chunks > 1) merge_chunks_if_last<D>(a, cta);
}

template <typename T, int D>
void launch(const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v, const KernelArgs& a, unsigned ctas,
            cudaStream_t stream) {
  split_kv_kernel<T, D><<<dim3(ctas, static_cast<unsigned>(a.chunks)), kWarps * kLanes, shared_bytes(D), stream>>>(
      reinterpret_cast<const T*>(q), reinterpret_cast<const T*>(k), reinterpret_cast<const T*>(v), a);
}

}  // namespace

// The four instantiations (dtype x head dim).
KernelEntry kernel_entry(Dtype dtype, int head_dim) {
  if (dtype == Dtype::bf16) {
    if (head_dim == 64)
      return {&launch<__nv_bfloat16, 64>, reinterpret_cast<const void*>(&split_kv_kernel<__nv_bfloat16, 64>),
              shared_bytes(64)};
    return {&launch<__nv_bfloat16, 128>, reinterpret_cast<const void*>(&split_kv_kernel<__nv_bfloat16, 128>),
            shared_bytes(128)};
  }
  if (head_dim == 64)
    return {&launch<__half, 64>, reinterpret_cast<const void*>(&split_kv_kernel<__half, 64>), shared_bytes(64)};
  return {&launch<__half, 128>, reinterpret_cast<const void*>(&split_kv_kernel<__half, 128>), shared_bytes(128)};
}

}  // namespace treering::realrun::cuda
