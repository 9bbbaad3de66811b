// The CUDA split-KV kernel (realrun/src/cuda/attention.cu) run on the CPU, thread by thread: the same CTAs and
// chunks, the same lane places, tokens per slot, 128-bit row pieces, the lane groups' xor-butterfly sums, the
// online softmax per tile and the merges, all through split_kv.hpp's functions as the kernel calls them. So the
// kernel's indexing and arithmetic are checked in make test, where no GPU is. `reads`, when given, counts how
// often each (token, sequence, KV head, head-dim value) was loaded per query-head block (each must be 1).
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/realrun/split_kv.hpp"

namespace treering::realrun::testing {

namespace emulation {

using namespace split_kv;
constexpr int kThreads = kWarps * kLanes;

struct Thread {  // one thread's registers
  LanePlace place;
  std::array<std::array<float, kValuesPerLoad>, kMaxHeadsPerCta> q{}, acc{};
  std::array<float, kMaxHeadsPerCta> m2{}, l{};
};

// The xor butterfly of group_sum<D> over one warp's 32 values (all lanes step at once).
inline void butterfly(std::array<float, kLanes>& values, int head_dim) {
  for (int offset = lanes_per_token(head_dim) / 2; offset > 0; offset /= 2) {
    std::array<float, kLanes> next{};
    for (int lane = 0; lane < kLanes; ++lane) next[static_cast<size_t>(lane)] = values[static_cast<size_t>(lane)] + values[static_cast<size_t>(lane ^ offset)];
    values = next;
  }
}

struct Cta {
  const AttentionShape& shape;
  Dtype dtype;
  const std::uint16_t *q, *k, *v;
  long long tokens;
  int chunks, heads;
  std::vector<int>* reads;

  long long stride() const { return shape.kv_values_per_token(); }

  void load_q(std::vector<Thread>& threads, const CtaPlace& cta) const {
    const float q_scale = kLog2e / std::sqrt(static_cast<float>(shape.head_dim));
    for (int t = 0; t < kThreads; ++t) {
      Thread& thread = threads[static_cast<size_t>(t)];
      thread.place = lane_place(shape.head_dim, t / kLanes, t % kLanes);
      for (int j = 0; j < heads; ++j) {
        const long long state = static_cast<long long>(cta.sequence) * shape.query_heads + cta.first_query_head + j;
        for (int i = 0; i < kValuesPerLoad; ++i) {
          thread.q[j][i] = from_half(dtype, q[state * shape.head_dim + thread.place.first_value + i]) * q_scale;
        }
        thread.m2[j] = -INFINITY;
      }
    }
  }

  // One tile: every thread's loads, the warps' butterflies, every thread's online-softmax update.
  void tile(std::vector<Thread>& threads, const CtaPlace& cta, const TokenRange& range, long long tile_index, int block) const {
    const int d = shape.head_dim;
    float values[kThreads][kTokensInFlight][kValuesPerLoad] = {};
    std::array<std::array<std::array<float, kLanes>, kTokensInFlight>, kMaxHeadsPerCta> partials[kWarps] = {};
    int valid[kThreads] = {};
    const long long row_base = (static_cast<long long>(cta.sequence) * shape.kv_heads + cta.kv_head) * d;
    for (int t = 0; t < kThreads; ++t) {
      const LanePlace& place = threads[static_cast<size_t>(t)].place;
      for (int u = 0; u < kTokensInFlight; ++u) {
        const long long token = token_at(range.begin, d, tile_index, u, place.group);
        if (token >= range.end) continue;
        ++valid[t];
        for (int i = 0; i < kValuesPerLoad; ++i) {
          const long long at = token * stride() + row_base + place.first_value + i;
          if (reads) ++(*reads)[static_cast<size_t>(block * tokens * stride() + at)];
          values[t][u][i] = from_half(dtype, v[at]);
          for (int j = 0; j < heads; ++j) partials[t / kLanes][j][u][t % kLanes] += threads[static_cast<size_t>(t)].q[j][i] * from_half(dtype, k[at]);
        }
      }
    }
    for (auto& warp : partials) {
      for (auto& head : warp) {
        for (auto& slot : head) butterfly(slot, d);
      }
    }
    for (int t = 0; t < kThreads; ++t) {
      Thread& thread = threads[static_cast<size_t>(t)];
      for (int j = 0; j < heads; ++j) {
        float scores[kTokensInFlight];
        for (int u = 0; u < kTokensInFlight; ++u) scores[u] = partials[t / kLanes][j][u][t % kLanes];
        online_softmax_tile(thread.m2[j], thread.l[j], thread.acc[j].data(), scores, values[t], valid[t]);
      }
    }
  }

  // The shared-memory merge of the lane groups, written as the kernel writes it.
  void finish(const std::vector<Thread>& threads, const CtaPlace& cta, int chunk, float* o_part, float* lse_part, float* o, float* lse) const {
    const int d = shape.head_dim, groups = groups_per_cta(d);
    std::vector<float> m2(static_cast<size_t>(groups * heads)), l(m2.size()), acc(m2.size() * static_cast<size_t>(d));
    for (const Thread& thread : threads) {
      for (int j = 0; j < heads; ++j) {
        const auto at = static_cast<size_t>(thread.place.group * heads + j);
        if (thread.place.first_value == 0) {
          m2[at] = thread.m2[j];
          l[at] = thread.l[j];
        }
        for (int i = 0; i < kValuesPerLoad; ++i) acc[at * static_cast<size_t>(d) + static_cast<size_t>(thread.place.first_value + i)] = thread.acc[j][i];
      }
    }
    for (int j = 0; j < heads; ++j) {
      const GroupMerge merge = merge_groups(&m2[static_cast<size_t>(j)], &l[static_cast<size_t>(j)], groups, heads);
      const long long state = static_cast<long long>(cta.sequence) * shape.query_heads + cta.first_query_head + j;
      for (int i = 0; i < d; ++i) {
        float value = 0.0f;
        for (int g = 0; g < groups; ++g) {
          const auto at = static_cast<size_t>(g * heads + j);
          value += merge.weight(m2[at], l[at]) * acc[at * static_cast<size_t>(d) + static_cast<size_t>(i)];
        }
        float* out = chunks == 1 ? o + state * d : o_part + (state * chunks + chunk) * d;
        out[i] = value;
      }
      (chunks == 1 ? lse[state] : lse_part[state * chunks + chunk]) = merge.lse();
    }
  }
};

}  // namespace emulation

inline void emulate_split_kv(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                             const std::uint16_t* v, long long tokens, int chunks, float* o, float* lse,
                             std::vector<int>* reads = nullptr) {
  using namespace split_kv;
  const int heads = heads_per_cta(shape.query_heads, shape.kv_heads), d = shape.head_dim;
  const long long ctas = shape.states() / heads;
  if (reads) reads->assign(static_cast<size_t>(tokens * shape.kv_values_per_token() * (shape.query_heads / shape.kv_heads / heads)), 0);
  std::vector<float> o_part(static_cast<size_t>(shape.states() * chunks * d)), lse_part(static_cast<size_t>(shape.states() * chunks));
  const emulation::Cta kernel{shape, dtype, q, k, v, tokens, chunks, heads, reads};
  for (int cta = 0; cta < ctas; ++cta) {
    const CtaPlace place = cta_place(cta, shape.query_heads, shape.kv_heads);
    const int block = (place.first_query_head % (shape.query_heads / shape.kv_heads)) / heads;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      std::vector<emulation::Thread> threads(emulation::kThreads);
      kernel.load_q(threads, place);
      const TokenRange range = chunk_range(tokens, chunks, chunk);
      for (long long tile = 0; token_at(range.begin, d, tile, 0, 0) < range.end; ++tile) kernel.tile(threads, place, range, tile, block);
      kernel.finish(threads, place, chunk, o_part.data(), lse_part.data(), o, lse);
    }
  }
  if (chunks == 1) return;
  for (long long state = 0; state < shape.states(); ++state) {  // merge_kernel
    const float merged = merged_lse(lse_part.data() + state * chunks, chunks);
    for (int i = 0; i < d; ++i) {
      float value = 0.0f;
      for (int s = 0; s < chunks; ++s) value += state_weight(lse_part[static_cast<size_t>(state * chunks + s)], merged) * o_part[static_cast<size_t>((state * chunks + s) * d + i)];
      o[state * d + i] = value;
    }
    lse[state] = merged;
  }
}

}  // namespace treering::realrun::testing
