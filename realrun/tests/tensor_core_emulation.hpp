// The tensor-core split-KV kernel (realrun/src/cuda/attention.cu) run on the CPU, warp by warp and lane by lane:
// the same CTAs, chunks, warp tiles, cp.async pieces into swizzled shared memory, ldmatrix rows, MMAs, online
// softmax, hi/lo weights and merges, all through split_kv.hpp's functions as the kernel calls them. The three PTX
// instructions are emulated here from the PTX ISA's definitions, written out independently of split_kv.hpp's
// fragment maps, so that a map that disagrees with the instruction fails in make test, where no GPU is.
// `reads`, when given, counts how often each (token, sequence, KV head, head-dim value) of K was copied per
// query-head block (each must be 1; V's copies are the same pieces).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/half.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/realrun/split_kv.hpp"

namespace treering::realrun::testing {

namespace tensor_core {

using namespace split_kv;
using Register = std::array<std::uint32_t, kLanes>;  // one 32-bit register across a warp's lanes
using Accumulators = std::array<std::array<float, 4>, kLanes>;

inline std::uint16_t half_of(std::uint32_t word, int high) {
  return static_cast<std::uint16_t>(high ? word >> 16 : word & 0xFFFFu);
}
inline std::uint32_t pack(std::uint16_t low, std::uint16_t high) {
  return static_cast<std::uint32_t>(low) | (static_cast<std::uint32_t>(high) << 16);
}

// ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16, from the PTX ISA: lane 8m + r gives the address of row r of
// matrix m (8 consecutive 16-bit values); destination register m of lane l holds matrix m's row l / 4, columns
// 2 (l % 4) and 2 (l % 4) + 1; with .trans the matrix is transposed first, so it holds column l / 4, rows 2 (l % 4)
// and 2 (l % 4) + 1. `row_at[lane]`: the lane's row address, in 16-bit values from `shared`.
inline std::array<Register, 4> ldmatrix_x4(const std::vector<std::uint16_t>& shared,
                                           const std::array<long long, kLanes>& row_at, bool trans) {
  std::array<Register, 4> out{};
  for (int m = 0; m < 4; ++m) {
    auto value = [&](int row, int col) {
      return shared.at(static_cast<size_t>(row_at[static_cast<size_t>(8 * m + row)] + col));
    };
    for (int l = 0; l < kLanes; ++l) {
      const int r = l / 4, c = 2 * (l % 4);
      out[static_cast<size_t>(m)][static_cast<size_t>(l)] =
          trans ? pack(value(c, r), value(c + 1, r)) : pack(value(r, c), value(r, c + 1));
    }
  }
  return out;
}

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}, from the PTX ISA's fragment tables (g = lane / 4,
// t = lane % 4): A register j's two halves are A[g + 8 (j % 2)][2 t + 8 (j / 2) + {0, 1}]; B register j's are
// B[2 t + 8 j + {0, 1}][g]; accumulator i is D[g + 8 (i / 2)][2 t + i % 2]. Products exact, sums in float.
inline void mma(Accumulators& c, const std::array<Register, 4>& a, const Register& b0, const Register& b1,
                Dtype dtype) {
  float A[16][16] = {}, B[16][8] = {};
  for (int l = 0; l < kLanes; ++l) {
    const int g = l / 4, t = l % 4;
    for (int j = 0; j < 4; ++j) {
      for (int h = 0; h < 2; ++h)
        A[g + 8 * (j % 2)][2 * t + 8 * (j / 2) + h] =
            from_half(dtype, half_of(a[static_cast<size_t>(j)][static_cast<size_t>(l)], h));
    }
    for (int h = 0; h < 2; ++h) {
      B[2 * t + h][g] = from_half(dtype, half_of(b0[static_cast<size_t>(l)], h));
      B[2 * t + 8 + h][g] = from_half(dtype, half_of(b1[static_cast<size_t>(l)], h));
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    for (int i = 0; i < 4; ++i) {
      const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
      float sum = 0.0f;
      for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
      c[static_cast<size_t>(l)][static_cast<size_t>(i)] += sum;
    }
  }
}

// __shfl_xor_sync butterflies over the 4 lanes of each quad.
template <typename Op>
void quad_reduce(std::array<float, kLanes>& values, Op op) {
  for (int offset : {1, 2}) {
    std::array<float, kLanes> next{};
    for (int l = 0; l < kLanes; ++l)
      next[static_cast<size_t>(l)] = op(values[static_cast<size_t>(l)], values[static_cast<size_t>(l ^ offset)]);
    values = next;
  }
}

struct Warp {
  std::vector<std::array<Register, 4>> q;  // [k-step]
  std::vector<Accumulators> acc;           // [n-tile]
  std::array<std::array<float, kLanes>, 2> m2{}, l{};
  std::vector<std::uint16_t> stages;  // kStages x stage_values 16-bit values
};

struct Cta {
  const AttentionShape& shape;
  Dtype dtype;
  const std::uint16_t *q, *k, *v;
  long long tokens;
  int chunks;
  std::vector<int>* reads;
  int d() const { return shape.head_dim; }
  long long stride() const { return shape.kv_values_per_token(); }

  Warp start(const CtaPlace& cta) const {
    Warp w{std::vector<std::array<Register, 4>>(static_cast<size_t>(d() / 16)),
           std::vector<Accumulators>(static_cast<size_t>(d() / 8)),
           {},
           {},
           std::vector<std::uint16_t>(static_cast<size_t>(kStages * stage_values(d())))};
    const std::uint16_t* block =
        q + (static_cast<long long>(cta.sequence) * shape.query_heads + cta.first_query_head) * d();
    for (int ks = 0; ks < d() / 16; ++ks) {
      for (int j = 0; j < 4; ++j) {
        for (int lane = 0; lane < kLanes; ++lane) {
          const int row = a_row(lane, j), col = 16 * ks + a_col(lane, j, 0);
          w.q[static_cast<size_t>(ks)][static_cast<size_t>(j)][static_cast<size_t>(lane)] =
              row < cta.rows ? pack(block[row * d() + col], block[row * d() + col + 1]) : 0u;
        }
      }
    }
    for (auto& rows : w.m2) rows.fill(-INFINITY);
    return w;
  }

  // stage_tile: the warp's copy of its tile `tile` into stage `stage` (zeros past the chunk's end).
  void stage_tile(Warp& w, int stage, const CtaPlace& cta, const TokenRange& range, int warp, long long tile,
                  int block) const {
    const long long first = range.begin + warp_tile_begin(d(), warp, tile);
    const long long head_offset = (static_cast<long long>(cta.sequence) * shape.kv_heads + cta.kv_head) * d();
    std::uint16_t* k_tile = w.stages.data() + stage * stage_values(d());
    std::uint16_t* v_tile = k_tile + warp_tile_tokens(d()) * d();
    for (int step = 0; step < copy_steps(d()); ++step) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const TilePlace piece = copy_piece(d(), step, lane);
        const bool here = first + piece.row < range.end;
        const long long from = (first + piece.row) * stride() + head_offset + piece.slot * kValuesPerSlot;
        const int to = swizzled_slot(d(), piece.row, piece.slot) * kValuesPerSlot;
        for (int i = 0; i < kValuesPerSlot; ++i) {
          k_tile[to + i] = here ? k[from + i] : 0;
          v_tile[to + i] = here ? v[from + i] : 0;
          if (here && reads) ++(*reads)[static_cast<size_t>(block * tokens * stride() + from + i)];
        }
      }
    }
  }

  std::array<long long, kLanes> rows_of(int stage, bool values, int u, int step, bool for_v) const {
    std::array<long long, kLanes> at{};
    for (int lane = 0; lane < kLanes; ++lane) {
      const TilePlace p = for_v ? v_matrix_row(step, u, lane) : k_matrix_row(step, u, lane);
      at[static_cast<size_t>(lane)] = stage * stage_values(d()) + (values ? warp_tile_tokens(d()) * d() : 0) +
                                      swizzled_slot(d(), p.row, p.slot) * kValuesPerSlot;
    }
    return at;
  }

  // WarpState::attend: 16 tokens (rows 16 u ... of the staged tile, the first token `first`).
  void attend(Warp& w, int stage, int u, long long first, long long end) const {
    const float scale_log2 = kLog2e / std::sqrt(static_cast<float>(d()));
    std::array<Accumulators, 2> s{};
    for (int ks = 0; ks < d() / 16; ++ks) {
      const auto b = ldmatrix_x4(w.stages, rows_of(stage, false, u, ks, false), false);
      mma(s[0], w.q[static_cast<size_t>(ks)], b[0], b[1], dtype);
      mma(s[1], w.q[static_cast<size_t>(ks)], b[2], b[3], dtype);
    }
    std::array<std::array<float, kLanes>, 2> top{};
    for (auto& rows : top) rows.fill(-INFINITY);
    for (int lane = 0; lane < kLanes; ++lane) {
      for (int n = 0; n < 2; ++n) {
        for (int i = 0; i < 4; ++i) {
          float& score = s[static_cast<size_t>(n)][static_cast<size_t>(lane)][static_cast<size_t>(i)];
          score = first + 8 * n + accumulator_col(lane, i) < end ? score * scale_log2 : -INFINITY;
          top[static_cast<size_t>(i / 2)][static_cast<size_t>(lane)] =
              std::fmax(top[static_cast<size_t>(i / 2)][static_cast<size_t>(lane)], score);
        }
      }
    }
    for (auto& rows : top) quad_reduce(rows, [](float a, float b) { return std::fmax(a, b); });
    std::array<Register, 4> hi{}, lo{};
    for (int lane = 0; lane < kLanes; ++lane) {
      const auto L = static_cast<size_t>(lane);
      RowStep step[2];
      for (int r = 0; r < 2; ++r) {
        step[r] = row_step(w.m2[static_cast<size_t>(r)][L], top[static_cast<size_t>(r)][L]);
        w.m2[static_cast<size_t>(r)][L] = step[r].top;
        w.l[static_cast<size_t>(r)][L] *= step[r].rescale;
      }
      for (auto& tile : w.acc) {
        for (int i = 0; i < 4; ++i) tile[L][static_cast<size_t>(i)] *= step[i / 2].rescale;
      }
      float p[2][4];
      for (int n = 0; n < 2; ++n) {
        for (int i = 0; i < 4; ++i) {
          p[n][i] = exp2f(s[static_cast<size_t>(n)][L][static_cast<size_t>(i)] - step[i / 2].offset);
          w.l[static_cast<size_t>(i / 2)][L] += p[n][i];
        }
      }
      for (int j = 0; j < 4; ++j) {  // split_weights
        const float a = p[j / 2][2 * (j % 2)], b = p[j / 2][2 * (j % 2) + 1];
        const std::uint16_t a_hi = to_half(dtype, a), b_hi = to_half(dtype, b);
        hi[static_cast<size_t>(j)][L] = pack(a_hi, b_hi);
        lo[static_cast<size_t>(j)][L] =
            pack(to_half(dtype, a - from_half(dtype, a_hi)), to_half(dtype, b - from_half(dtype, b_hi)));
      }
    }
    for (int np = 0; np < d() / 16; ++np) {
      const auto b = ldmatrix_x4(w.stages, rows_of(stage, true, u, np, true), true);
      for (const auto* weights : {&hi, &lo}) {
        mma(w.acc[static_cast<size_t>(2 * np)], *weights, b[0], b[1], dtype);
        mma(w.acc[static_cast<size_t>(2 * np + 1)], *weights, b[2], b[3], dtype);
      }
    }
  }

  // The warp's loop over its tiles (the stages' rotation as the kernel's), then its state: O [16][d], m2 and l per row.
  struct WarpResult {
    std::vector<float> o;
    std::array<float, kRows> m2{}, l{};
  };
  WarpResult run_warp(const CtaPlace& cta, const TokenRange& range, int warp, int block) const {
    Warp w = start(cta);
    const long long tiles = warp_tiles(d(), warp, range.end - range.begin);
    for (long long tile = 0; tile < tiles; ++tile) {
      stage_tile(w, static_cast<int>(tile % kStages), cta, range, warp, tile, block);
      const long long first = range.begin + warp_tile_begin(d(), warp, tile);
      for (int u = 0; u < warp_tile_tokens(d()) / 16; ++u)
        attend(w, static_cast<int>(tile % kStages), u, first + 16 * u, range.end);
    }
    WarpResult out{std::vector<float>(static_cast<size_t>(kRows * d())), {}, {}};
    for (int r = 0; r < 2; ++r) quad_reduce(w.l[static_cast<size_t>(r)], [](float a, float b) { return a + b; });
    for (int lane = 0; lane < kLanes; ++lane) {
      for (int n = 0; n < d() / 8; ++n) {
        for (int i = 0; i < 4; ++i) {
          out.o[static_cast<size_t>(accumulator_row(lane, i) * d() + 8 * n + accumulator_col(lane, i))] =
              w.acc[static_cast<size_t>(n)][static_cast<size_t>(lane)][static_cast<size_t>(i)];
        }
      }
      for (int r = 0; r < 2; ++r) {
        out.m2[static_cast<size_t>(lane / 4 + 8 * r)] = w.m2[static_cast<size_t>(r)][static_cast<size_t>(lane)];
        out.l[static_cast<size_t>(lane / 4 + 8 * r)] = w.l[static_cast<size_t>(r)][static_cast<size_t>(lane)];
      }
    }
    return out;
  }
};

}  // namespace tensor_core

// The whole launch: every CTA and chunk, the warps' merge (write_chunk_state), the chunks' merge (the last CTA's).
inline void emulate_split_kv(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                             const std::uint16_t* v, long long tokens, int chunks, float* o, float* lse,
                             std::vector<int>* reads = nullptr) {
  using namespace split_kv;
  const int d = shape.head_dim, blocks = head_blocks(shape.query_heads, shape.kv_heads);
  if (reads) reads->assign(static_cast<size_t>(tokens * shape.kv_values_per_token() * blocks), 0);
  std::vector<float> o_part(static_cast<size_t>(shape.states() * chunks * d)),
      lse_part(static_cast<size_t>(shape.states() * chunks));
  const tensor_core::Cta kernel{shape, dtype, q, k, v, tokens, chunks, reads};
  for (int x = 0; x < shape.batch * shape.kv_heads * blocks; ++x) {
    const CtaPlace cta = cta_place(x, shape.query_heads, shape.kv_heads);
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const TokenRange range = chunk_range(tokens, chunks, chunk, d);
      std::vector<tensor_core::Cta::WarpResult> warps;
      for (int warp = 0; warp < kWarps; ++warp) warps.push_back(kernel.run_warp(cta, range, warp, x % blocks));
      float m2[kWarps][kRows], l[kWarps][kRows];
      for (int w = 0; w < kWarps; ++w) {
        for (int r = 0; r < kRows; ++r) {
          m2[w][r] = warps[static_cast<size_t>(w)].m2[static_cast<size_t>(r)];
          l[w][r] = warps[static_cast<size_t>(w)].l[static_cast<size_t>(r)];
        }
      }
      for (int row = 0; row < cta.rows; ++row) {
        const GroupMerge merge = merge_groups(&m2[0][row], &l[0][row], kWarps, kRows);
        const long long state = static_cast<long long>(cta.sequence) * shape.query_heads + cta.first_query_head + row;
        for (int i = 0; i < d; ++i) {
          float value = 0.0f;
          for (int w = 0; w < kWarps; ++w)
            value +=
                merge.weight(m2[w][row], l[w][row]) * warps[static_cast<size_t>(w)].o[static_cast<size_t>(row * d + i)];
          (chunks == 1 ? o[state * d + i] : o_part[static_cast<size_t>((state * chunks + chunk) * d + i)]) = value;
        }
        (chunks == 1 ? lse[state] : lse_part[static_cast<size_t>(state * chunks + chunk)]) = merge.lse();
      }
    }
  }
  if (chunks == 1) return;
  for (long long state = 0; state < shape.states(); ++state) {  // merge_chunks_if_last
    const float merged = merged_lse(lse_part.data() + state * chunks, chunks);
    for (int i = 0; i < d; ++i) {
      float value = 0.0f;
      for (int c = 0; c < chunks; ++c)
        value += state_weight(lse_part[static_cast<size_t>(state * chunks + c)], merged) *
                 o_part[static_cast<size_t>((state * chunks + c) * d + i)];
      o[state * d + i] = value;
    }
    lse[state] = merged;
  }
}

}  // namespace treering::realrun::testing
