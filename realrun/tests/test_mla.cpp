// The absorbed MLA kernel (attention.hpp with mla_run.hpp's absorbed_shape) against an independent double-precision
// reference of the UNABSORBED form: per head k_h = [W_UK_h c_kv ; k_pe], v_h = W_UV_h c_kv, q_h = [q_nope_h ; q_pe_h],
// scores scaled by 1 / sqrt(nope + rope).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "treering/model/workload.hpp"
#include "treering/realrun/mla_run.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering;
using realrun::Dtype;

namespace {

// 8 heads, kv_lora_rank 64, rope 16, nope 32, v 32, batch 2.
constexpr realrun::MlaShape kSmall{2, 8, 64, 16, 32, 32};

std::vector<double> normal(size_t count, double sigma, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> draw(0.0, sigma);
  std::vector<double> values(count);
  for (double& v : values) v = draw(generator);
  return values;
}

double bf16(double value) {
  return realrun::from_half(Dtype::bf16, realrun::to_half(Dtype::bf16, static_cast<float>(value)));
}

// Random weights and inputs; c_kv and k_pe are the cache, stored in bf16, so both forms read the rounded values.
// Weights ~ N(0, 1 / fan-in) keep k_nope ~ N(0, 1); queries ~ N(0, 2^2) make the scores ~ N(0, 4): a softmax
// concentrated on tens of tokens, not a flat mean.
struct Mla {
  realrun::MlaShape s = kSmall;
  long long tokens = 300;
  std::vector<double> w_uk, w_uv, c_kv, k_pe, q_nope, q_pe;  // [h][nope][R], [h][v][R], [t][b][R], [t][b][P], ...
  Mla()
      : w_uk(normal(size_t{8} * 32 * 64, 1.0 / 8.0, 1)),
        w_uv(normal(size_t{8} * 32 * 64, 1.0 / 8.0, 2)),
        c_kv(normal(300 * size_t{2} * 64, 1.0, 3)),
        k_pe(normal(300 * size_t{2} * 16, 1.0, 4)),
        q_nope(normal(size_t{2} * 8 * 32, 2.0, 5)),
        q_pe(normal(size_t{2} * 8 * 16, 2.0, 6)) {
    for (double& v : c_kv) v = bf16(v);
    for (double& v : k_pe) v = bf16(v);
  }
  double c(long long t, int b, int i) const {
    return c_kv[static_cast<size_t>((t * s.batch + b) * s.kv_lora_rank + i)];
  }
  double pe(long long t, int b, int i) const { return k_pe[static_cast<size_t>((t * s.batch + b) * s.rope_dim + i)]; }
  double uk(int h, int n, int i) const { return w_uk[static_cast<size_t>((h * s.nope_dim + n) * s.kv_lora_rank + i)]; }
  double uv(int h, int n, int i) const {
    return w_uv[static_cast<size_t>((h * s.v_head_dim + n) * s.kv_lora_rank + i)];
  }
};

// o_h of every (sequence, head), [b][h][v], the unabsorbed way: each head's own keys and values per token.
std::vector<double> unabsorbed_reference(const Mla& m) {
  const realrun::MlaShape& s = m.s;
  std::vector<double> o(static_cast<size_t>(s.batch * s.heads * s.v_head_dim), 0.0);
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      std::vector<double> scores(static_cast<size_t>(m.tokens));
      std::vector<std::vector<double>> values(static_cast<size_t>(m.tokens), std::vector<double>(32, 0.0));
      for (long long t = 0; t < m.tokens; ++t) {
        double score = 0;
        for (int n = 0; n < s.nope_dim; ++n) {
          double key = 0;
          for (int i = 0; i < s.kv_lora_rank; ++i) key += m.uk(h, n, i) * m.c(t, b, i);
          score += m.q_nope[static_cast<size_t>((b * s.heads + h) * s.nope_dim + n)] * key;
        }
        for (int i = 0; i < s.rope_dim; ++i)
          score += m.q_pe[static_cast<size_t>((b * s.heads + h) * s.rope_dim + i)] * m.pe(t, b, i);
        scores[static_cast<size_t>(t)] = score / std::sqrt(static_cast<double>(s.nope_dim + s.rope_dim));
        for (int n = 0; n < s.v_head_dim; ++n)
          for (int i = 0; i < s.kv_lora_rank; ++i)
            values[static_cast<size_t>(t)][static_cast<size_t>(n)] += m.uv(h, n, i) * m.c(t, b, i);
      }
      double top = scores[0], sum = 0;
      for (double score : scores) top = std::max(top, score);
      for (double score : scores) sum += std::exp(score - top);
      for (long long t = 0; t < m.tokens; ++t) {
        for (int n = 0; n < s.v_head_dim; ++n)
          o[static_cast<size_t>((b * s.heads + h) * s.v_head_dim + n)] +=
              std::exp(scores[static_cast<size_t>(t)] - top) / sum *
              values[static_cast<size_t>(t)][static_cast<size_t>(n)];
      }
    }
  }
  return o;
}

// The absorbed kernel's inputs: q_abs = [W_UK_h^T q_nope_h ; q_pe_h] in bf16, latents [c_kv ; k_pe] in bf16.
struct Absorbed {
  std::vector<std::uint16_t> q, latent;
};

Absorbed absorbed_inputs(const Mla& m) {
  const realrun::MlaShape& s = m.s;
  Absorbed a;
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      for (int i = 0; i < s.kv_lora_rank; ++i) {
        double value = 0;
        for (int n = 0; n < s.nope_dim; ++n)
          value += m.uk(h, n, i) * m.q_nope[static_cast<size_t>((b * s.heads + h) * s.nope_dim + n)];
        a.q.push_back(realrun::to_half(Dtype::bf16, static_cast<float>(value)));
      }
      for (int i = 0; i < s.rope_dim; ++i)
        a.q.push_back(realrun::to_half(
            Dtype::bf16, static_cast<float>(m.q_pe[static_cast<size_t>((b * s.heads + h) * s.rope_dim + i)])));
    }
  }
  for (long long t = 0; t < m.tokens; ++t) {
    for (int b = 0; b < s.batch; ++b) {
      for (int i = 0; i < s.kv_lora_rank; ++i)
        a.latent.push_back(realrun::to_half(Dtype::bf16, static_cast<float>(m.c(t, b, i))));
      for (int i = 0; i < s.rope_dim; ++i)
        a.latent.push_back(realrun::to_half(Dtype::bf16, static_cast<float>(m.pe(t, b, i))));
    }
  }
  return a;
}

}  // namespace

TEST_CASE("absorbed MLA kernel, then W_UV: the unabsorbed attention of every head") {
  const Mla m;
  const realrun::AttentionShape shape = realrun::absorbed_shape(m.s);
  CHECK(shape.head_dim == 80);
  CHECK(shape.value_width() == 64);
  CHECK(shape.scale_width() == 48);
  const Absorbed a = absorbed_inputs(m);
  std::vector<float> o_lat(static_cast<size_t>(shape.o_values())), lse(static_cast<size_t>(shape.states()));
  realrun::partial_attention(shape, Dtype::bf16, a.q.data(), a.latent.data(), a.latent.data(), m.tokens, o_lat.data(),
                             lse.data());
  std::vector<float> o;  // W_UV_h o_lat_h in double, stored as float (rounding 6e-8, far below the tolerance)
  for (int b = 0; b < m.s.batch; ++b) {
    for (int h = 0; h < m.s.heads; ++h) {
      for (int n = 0; n < m.s.v_head_dim; ++n) {
        double value = 0;
        for (int i = 0; i < m.s.kv_lora_rank; ++i)
          value += m.uv(h, n, i) * o_lat[static_cast<size_t>((b * m.s.heads + h) * m.s.kv_lora_rank + i)];
        o.push_back(static_cast<float>(value));
      }
    }
  }
  // The tolerance: the forms differ only by rounding. The cache is bf16 in both; the absorbed query q_abs is rounded
  // to bf16 (relative error at most u = 2^-9 ~ 2.0e-3 a value), which moves each score (std 2 here) by about
  // u x |score| ~ 4e-3 rms with random signs; the output, a softmax-weighted mean of the values, moves by about the
  // score error times the spread of the values about it, normwise ~ the same 4e-3 of its head's largest value; the
  // fp32 accumulation adds ~1e-6. 1e-2 (5u) bounds that, the worst of 16 heads included; measured 5.2e-3.
  const double error = realrun::max_relative_error(o.data(), unabsorbed_reference(m), m.s.v_head_dim);
  MESSAGE("absorbed vs unabsorbed, normwise per head: " << error);
  CHECK(error < 1e-2);
  // And the kernel on these 16-bit inputs against the double reference of the same absorbed attention: fp32
  // accumulation alone, the GQA kernel's 1e-5 (test_attention.cpp).
  const std::vector<double> same =
      realrun::reference_attention(shape, Dtype::bf16, a.q.data(), a.latent.data(), a.latent.data(), m.tokens);
  CHECK(realrun::max_relative_error(o_lat.data(), same, shape.value_width()) < 1e-5);
}

TEST_CASE("MLA workloads: the absorbed shape, and the GQA paths refuse them") {
  const model::Workload& v3 = model::find_workload("deepseek-v3");
  const realrun::AttentionShape shape = realrun::absorbed_shape(realrun::mla_shape_of(v3));
  CHECK(shape.head_dim == 576);
  CHECK(shape.value_width() == 512);
  CHECK(shape.scale_width() == 192);
  CHECK(shape.kv_heads == 1);
  CHECK_THROWS_AS(realrun::shape_of(v3), topologies::InputError);
  CHECK_THROWS_AS(realrun::mla_shape_of(model::find_workload("llama3.1-8b")), topologies::InputError);
  const model::Workload combine = realrun::combine_workload(v3);
  CHECK(combine.head_dim == 512);
  CHECK(combine.kv_heads == 1);
  CHECK_NOTHROW(model::validate(combine));
  realrun::AttentionShape bad = shape;
  bad.value_dim = 577;
  CHECK_THROWS_AS(realrun::check_shape(bad), topologies::InputError);
}
