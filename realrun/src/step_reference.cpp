// step_run.hpp's reference_step: the real step on the host, rank by rank, as the GPU runs it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "treering/realrun/half.hpp"
#include "treering/realrun/input_hash.hpp"
#include "treering/realrun/step_run.hpp"

namespace treering::realrun {
namespace {

using Values = std::vector<double>;

double bf(double value) { return bf16_to_float(float_to_bf16(static_cast<float>(value))); }

Values made(std::uint64_t stream, std::size_t count, float scale) {
  Values values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = bf16_to_float(float_to_bf16(hashed_value(stream, i) * scale));
  return values;
}

struct RankTensors {
  struct Layer {
    Values attention_norm, qkv, o, mlp_norm, gate_up, down, k, v;
  };
  std::vector<Layer> layers;
  Values final_norm, lm_head;
};

RankTensors rank_tensors(const StepShape& s, std::uint64_t seed, int rank) {
  const std::size_t h = static_cast<std::size_t>(s.hidden), qkv = static_cast<std::size_t>(s.qkv_rows());
  const std::size_t width = static_cast<std::size_t>(s.attention_width()),
                    mlp = static_cast<std::size_t>(s.intermediate);
  const std::size_t cache = static_cast<std::size_t>((s.seq_len + 1) * s.batch * s.kv_heads * s.head_dim);
  std::uint64_t stream = step_rank_stream(seed, rank);
  RankTensors t;
  for (int l = 0; l < s.layers; ++l) {
    RankTensors::Layer layer;
    layer.attention_norm = made(stream++, h, 1.0f);
    layer.qkv = made(stream++, qkv * h, step_scale(s.hidden));
    layer.o = made(stream++, h * width, step_scale(s.attention_width()));
    layer.mlp_norm = made(stream++, h, 1.0f);
    layer.gate_up = made(stream++, 2 * mlp * h, step_scale(s.hidden));
    layer.down = made(stream++, h * mlp, step_scale(s.intermediate));
    layer.k = made(stream++, cache, 1.0f);
    layer.v = made(stream++, cache, 1.0f);
    t.layers.push_back(std::move(layer));
  }
  t.final_norm = made(stream++, h, 1.0f);
  t.lm_head = made(stream++, static_cast<std::size_t>(s.vocab) * h, step_scale(s.hidden));
  return t;
}

// y[b][n] = sum_k w[n][k] x[b][k] (+ add[b][n]), rounded to bf16.
Values product(const Values& w, const Values& x, int rows, std::size_t n, std::size_t k, const Values* add = nullptr) {
  Values y(static_cast<std::size_t>(rows) * n);
  for (int b = 0; b < rows; ++b) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = add ? (*add)[b * n + j] : 0.0;
      for (std::size_t i = 0; i < k; ++i) sum += w[j * k + i] * x[b * k + i];
      y[b * n + j] = bf(sum);
    }
  }
  return y;
}

Values rms_norm(const Values& x, const Values& weight, int rows, std::size_t h) {
  Values y(x.size());
  for (int b = 0; b < rows; ++b) {
    double squares = 0;
    for (std::size_t i = 0; i < h; ++i) squares += x[b * h + i] * x[b * h + i];
    const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(h) + 1e-5);
    for (std::size_t i = 0; i < h; ++i) y[b * h + i] = bf(x[b * h + i] * inverse * weight[i]);
  }
  return y;
}

// RoPE of one head in place (rotate-half pairs), then rounded.
void rotate(double* head, int d, long long position) {
  for (int i = 0; i < d / 2; ++i) {
    const double angle = static_cast<double>(position) * std::pow(500000.0, -2.0 * i / d);
    const double x0 = head[i], x1 = head[i + d / 2];
    head[i] = bf(x0 * std::cos(angle) - x1 * std::sin(angle));
    head[i + d / 2] = bf(x1 * std::cos(angle) + x0 * std::sin(angle));
  }
}

// The attention block's output projection input: QKV, RoPE, the append, attention over seq_len + 1 tokens.
Values attend(const StepShape& s, RankTensors::Layer& t, const Values& h) {
  const int d = s.head_dim, group = s.query_heads / s.kv_heads;
  const std::size_t kv_row = static_cast<std::size_t>(s.batch) * s.kv_heads * d;  // one token
  Values qkv = product(t.qkv, h, s.batch, static_cast<std::size_t>(s.qkv_rows()), static_cast<std::size_t>(s.hidden));
  Values out(static_cast<std::size_t>(s.batch) * s.attention_width());
  const long long tokens = s.seq_len + 1;
  for (int b = 0; b < s.batch; ++b) {
    double* row = qkv.data() + static_cast<std::size_t>(b) * s.qkv_rows();
    for (int head = 0; head < s.query_heads + s.kv_heads; ++head) rotate(row + head * d, d, s.seq_len);
    for (int kv = 0; kv < s.kv_heads; ++kv) {
      const std::size_t slot =
          static_cast<std::size_t>(s.seq_len) * kv_row + (static_cast<std::size_t>(b) * s.kv_heads + kv) * d;
      std::copy(row + (s.query_heads + kv) * d, row + (s.query_heads + kv + 1) * d,
                t.k.begin() + static_cast<long>(slot));
      std::copy(row + (s.query_heads + s.kv_heads + kv) * d, row + (s.query_heads + s.kv_heads + kv + 1) * d,
                t.v.begin() + static_cast<long>(slot));
    }
    for (int qh = 0; qh < s.query_heads; ++qh) {
      const std::size_t base = (static_cast<std::size_t>(b) * s.kv_heads + qh / group) * d;
      std::vector<double> scores(static_cast<std::size_t>(tokens));
      double top = -INFINITY;
      for (long long n = 0; n < tokens; ++n) {
        double dot = 0;
        for (int i = 0; i < d; ++i) dot += row[qh * d + i] * t.k[static_cast<std::size_t>(n) * kv_row + base + i];
        scores[static_cast<std::size_t>(n)] = dot / std::sqrt(static_cast<double>(d));
        top = std::max(top, scores[static_cast<std::size_t>(n)]);
      }
      double total = 0;
      for (double& score : scores) total += (score = std::exp(score - top));
      for (int i = 0; i < d; ++i) {
        double sum = 0;
        for (long long n = 0; n < tokens; ++n)
          sum += scores[static_cast<std::size_t>(n)] * t.v[static_cast<std::size_t>(n) * kv_row + base + i];
        out[(static_cast<std::size_t>(b) * s.query_heads + qh) * d + i] = bf(sum / total);
      }
    }
  }
  return out;
}

// x += the ranks' partial sums (tp 1: the one rank's product, added before rounding as cuBLASLt's beta does).
void add_partials(Values& x, const std::vector<Values>& partials, bool fused) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    double sum = 0;
    for (const Values& p : partials) sum += p[i];
    x[i] = fused ? partials.front()[i] : bf(x[i] + sum);
  }
}

}  // namespace

StepOutputs reference_step(const StepShape& s, std::uint64_t seed) {
  std::vector<RankTensors> ranks;
  for (int r = 0; r < s.tp; ++r) ranks.push_back(rank_tensors(s, seed, r));
  const std::size_t h = static_cast<std::size_t>(s.hidden);
  Values x = made(step_hidden_stream(seed), static_cast<std::size_t>(s.batch) * h, 1.0f);
  const bool fused = s.tp == 1;
  for (int l = 0; l < s.layers; ++l) {
    std::vector<Values> partials;
    for (RankTensors& rank : ranks) {
      RankTensors::Layer& t = rank.layers[static_cast<std::size_t>(l)];
      const Values attended = attend(s, t, rms_norm(x, t.attention_norm, s.batch, h));
      partials.push_back(
          product(t.o, attended, s.batch, h, static_cast<std::size_t>(s.attention_width()), fused ? &x : nullptr));
    }
    add_partials(x, partials, fused);
    partials.clear();
    for (RankTensors& rank : ranks) {
      const RankTensors::Layer& t = rank.layers[static_cast<std::size_t>(l)];
      const std::size_t mlp = static_cast<std::size_t>(s.intermediate);
      const Values gate_up = product(t.gate_up, rms_norm(x, t.mlp_norm, s.batch, h), s.batch, 2 * mlp, h);
      Values activated(static_cast<std::size_t>(s.batch) * mlp);
      for (std::size_t b = 0; b < static_cast<std::size_t>(s.batch); ++b) {
        for (std::size_t i = 0; i < mlp; ++i) {
          const double gate = gate_up[b * 2 * mlp + i], up = gate_up[b * 2 * mlp + mlp + i];
          activated[b * mlp + i] = bf(gate / (1.0 + std::exp(-gate)) * up);
        }
      }
      partials.push_back(product(t.down, activated, s.batch, h, mlp, fused ? &x : nullptr));
    }
    add_partials(x, partials, fused);
  }
  StepOutputs out;
  out.hidden.assign(x.begin(), x.end());
  out.logits.assign(static_cast<std::size_t>(s.batch) * s.full_vocab, 0.0f);
  for (int r = 0; r < s.tp; ++r) {
    const Values logits = product(ranks[static_cast<std::size_t>(r)].lm_head,
                                  rms_norm(x, ranks[static_cast<std::size_t>(r)].final_norm, s.batch, h), s.batch,
                                  static_cast<std::size_t>(s.vocab), h);
    for (int b = 0; b < s.batch; ++b) {
      for (int v = 0; v < s.vocab; ++v) {
        out.logits[static_cast<std::size_t>(b) * s.full_vocab + static_cast<std::size_t>(r) * s.vocab + v] =
            static_cast<float>(logits[static_cast<std::size_t>(b) * s.vocab + v]);
      }
    }
  }
  for (int b = 0; b < s.batch; ++b) {
    const auto row = out.logits.begin() + static_cast<long>(b) * s.full_vocab;
    out.next_tokens.push_back(static_cast<int>(std::max_element(row, row + s.full_vocab) - row));
  }
  return out;
}

}  // namespace treering::realrun
