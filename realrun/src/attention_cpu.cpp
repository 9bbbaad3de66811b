// Partial attention on the CPU, fp32 accumulation with a running max (one pass over the tokens, as
// flash-decoding does), and the double-precision reference (attention.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/merge.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {

void check_shape(const AttentionShape& shape) {
  if (shape.value_dim < 0 || shape.value_dim > shape.head_dim || shape.scale_dim < 0) {
    throw topologies::InputError("attention shape: value dim " + std::to_string(shape.value_dim) + ", scale dim " +
                                 std::to_string(shape.scale_dim) +
                                 " (0, or positive and the value dim at most head dim " +
                                 std::to_string(shape.head_dim) + ")");
  }
  if (shape.batch < 1 || shape.query_heads < 1 || shape.kv_heads < 1 || shape.head_dim < 1 ||
      shape.query_heads % shape.kv_heads != 0) {
    throw topologies::InputError("attention shape: batch " + std::to_string(shape.batch) + ", " +
                                 std::to_string(shape.query_heads) + " query heads, " + std::to_string(shape.kv_heads) +
                                 " KV heads, head dim " + std::to_string(shape.head_dim) +
                                 " (all positive, query heads a multiple of KV heads)");
  }
}

namespace {

template <Dtype kDtype>
float to_float(std::uint16_t value) {
  if constexpr (kDtype == Dtype::bf16)
    return bf16_to_float(value);
  else
    return fp16_to_float(value);
}

// The online softmax of every query head (fp32, running max), the tokens streamed in memory order: each
// token's K and V rows converted once per KV head, then taken by the `group` query heads that read them.
template <Dtype kDtype>
void all_heads(const AttentionShape& s, const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
               long long tokens, float* o, float* lse) {
  const int group = s.query_heads / s.kv_heads;
  const auto d = static_cast<size_t>(s.head_dim), dv = static_cast<size_t>(s.value_width());
  const auto states = static_cast<size_t>(s.states());
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.scale_width()));
  std::vector<float> qf(states * d), acc(states * dv, 0.0f), kf(d), vf(dv);
  std::vector<float> top(states, -std::numeric_limits<float>::infinity()), denominator(states, 0.0f);
  for (size_t i = 0; i < qf.size(); ++i) qf[i] = to_float<kDtype>(q[i]) * scale;
  const auto stride = static_cast<size_t>(s.kv_values_per_token());
  for (long long t = 0; t < tokens; ++t) {
    const std::uint16_t* kt = k + static_cast<size_t>(t) * stride;
    const std::uint16_t* vt = v + static_cast<size_t>(t) * stride;
    for (size_t head = 0; head < stride / d; ++head) {  // (sequence, KV head)
      for (size_t i = 0; i < d; ++i) kf[i] = to_float<kDtype>(kt[head * d + i]);
      for (size_t i = 0; i < dv; ++i) vf[i] = to_float<kDtype>(vt[head * d + i]);
      for (size_t state = head * static_cast<size_t>(group); state < (head + 1) * static_cast<size_t>(group); ++state) {
        const float* qh = qf.data() + state * d;
        float* ah = acc.data() + state * dv;
        float score = 0;
        for (size_t i = 0; i < d; ++i) score += qh[i] * kf[i];
        if (score > top[state]) {  // rescale what was summed so far
          const float factor = std::exp(top[state] - score);
          denominator[state] *= factor;
          for (size_t i = 0; i < dv; ++i) ah[i] *= factor;
          top[state] = score;
        }
        const float weight = std::exp(score - top[state]);
        denominator[state] += weight;
        for (size_t i = 0; i < dv; ++i) ah[i] += weight * vf[i];
      }
    }
  }
  for (size_t state = 0; state < states; ++state) {
    float* os = o + state * dv;
    if (tokens == 0) {
      std::fill(os, os + dv, 0.0f);
      lse[state] = -std::numeric_limits<float>::infinity();
      continue;
    }
    for (size_t i = 0; i < dv; ++i) os[i] = acc[state * dv + i] / denominator[state];
    lse[state] = top[state] + std::log(denominator[state]);
  }
}

}  // namespace

void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse) {
  check_shape(shape);
  if (tokens < 0) throw topologies::InputError("partial_attention: a negative number of tokens");
  if (dtype == Dtype::bf16)
    all_heads<Dtype::bf16>(shape, q, k, v, tokens, o, lse);
  else
    all_heads<Dtype::fp16>(shape, q, k, v, tokens, o, lse);
}

std::vector<double> reference_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q,
                                        const std::uint16_t* k, const std::uint16_t* v, long long tokens) {
  check_shape(shape);
  const int group = shape.query_heads / shape.kv_heads;
  const long long stride = shape.kv_values_per_token();
  const int dv = shape.value_width();
  std::vector<double> o(static_cast<size_t>(shape.o_values()), 0.0);
  std::vector<double> scores(static_cast<size_t>(tokens));
  for (int b = 0; b < shape.batch; ++b) {
    for (int h = 0; h < shape.query_heads; ++h) {
      const long long state = static_cast<long long>(b) * shape.query_heads + h;
      const long long kv_offset = (static_cast<long long>(b) * shape.kv_heads + h / group) * shape.head_dim;
      double top = -std::numeric_limits<double>::infinity();
      for (long long t = 0; t < tokens; ++t) {
        double score = 0;
        for (int i = 0; i < shape.head_dim; ++i) {
          score += static_cast<double>(from_half(dtype, q[state * shape.head_dim + i])) *
                   from_half(dtype, k[t * stride + kv_offset + i]);
        }
        scores[static_cast<size_t>(t)] = score / std::sqrt(static_cast<double>(shape.scale_width()));
        top = std::max(top, scores[static_cast<size_t>(t)]);
      }
      double sum = 0;
      for (long long t = 0; t < tokens; ++t) sum += std::exp(scores[static_cast<size_t>(t)] - top);
      for (long long t = 0; t < tokens; ++t) {
        const double weight = std::exp(scores[static_cast<size_t>(t)] - top) / sum;
        for (int i = 0; i < dv; ++i) {
          o[static_cast<size_t>(state * dv + i)] += weight * from_half(dtype, v[t * stride + kv_offset + i]);
        }
      }
    }
  }
  return o;
}

long long count_non_finite(const float* values, std::size_t count) {
  long long bad = 0;
  for (std::size_t i = 0; i < count; ++i) bad += std::isfinite(values[i]) ? 0 : 1;
  return bad;
}

double max_relative_error(const float* values, const std::vector<double>& reference, int head_dim) {
  return max_relative_error(values, reference, head_dim, {{0, static_cast<long long>(reference.size())}});
}

double max_relative_error(const float* values, const std::vector<double>& reference, int head_dim,
                          const std::vector<std::pair<long long, long long>>& spans) {
  const auto d = static_cast<size_t>(head_dim);
  double worst = 0, largest = 0;
  size_t head = static_cast<size_t>(-1);
  for (const auto& [first, count] : spans) {
    for (auto i = static_cast<size_t>(first); i < static_cast<size_t>(first + count); ++i) {
      if (!std::isfinite(values[i])) return std::numeric_limits<double>::infinity();
      if (i / d * d != head) {  // the largest |ref| of this value's head, once per head
        head = i / d * d;
        largest = 0;
        for (size_t j = head; j < head + d; ++j) largest = std::max(largest, std::abs(reference[j]));
      }
      const double error = std::abs(values[i] - reference[i]);
      worst = std::max(worst, largest > 0 ? error / largest : error);
    }
  }
  return worst;
}

}  // namespace treering::realrun
