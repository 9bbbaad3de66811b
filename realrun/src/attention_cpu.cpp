// Partial attention on the CPU, fp32 accumulation with a running max (one pass over the tokens, as
// flash-decoding does), and the double-precision reference (attention.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "treering/realrun/attention.hpp"
#include "treering/realrun/merge.hpp"

namespace treering::realrun {

void check_shape(const AttentionShape& shape) {
  if (shape.batch < 1 || shape.query_heads < 1 || shape.kv_heads < 1 || shape.head_dim < 1 ||
      shape.query_heads % shape.kv_heads != 0) {
    throw std::invalid_argument("attention shape: batch " + std::to_string(shape.batch) + ", " +
                                std::to_string(shape.query_heads) + " query heads, " + std::to_string(shape.kv_heads) +
                                " KV heads, head dim " + std::to_string(shape.head_dim) +
                                " (all positive, query heads a multiple of KV heads)");
  }
}

namespace {

// One query head of one sequence over the tokens: online softmax in fp32.
void one_head(const AttentionShape& s, Dtype dtype, const float* q, const std::uint16_t* k, const std::uint16_t* v,
              long long tokens, long long kv_offset, float* o, float& lse, std::vector<float>& acc) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  float running_max = -std::numeric_limits<float>::infinity();
  float denominator = 0;
  std::fill(acc.begin(), acc.end(), 0.0f);
  const long long stride = s.kv_values_per_token();
  for (long long t = 0; t < tokens; ++t) {
    const std::uint16_t* kt = k + t * stride + kv_offset;
    const std::uint16_t* vt = v + t * stride + kv_offset;
    float score = 0;
    for (int i = 0; i < s.head_dim; ++i) score += q[i] * from_half(dtype, kt[i]);
    score *= scale;
    if (score > running_max) {  // rescale what was summed so far
      const float factor = std::exp(running_max - score);
      denominator *= factor;
      for (float& a : acc) a *= factor;
      running_max = score;
    }
    const float weight = std::exp(score - running_max);
    denominator += weight;
    for (int i = 0; i < s.head_dim; ++i) acc[static_cast<size_t>(i)] += weight * from_half(dtype, vt[i]);
  }
  if (tokens == 0) {
    std::fill(o, o + s.head_dim, 0.0f);
    lse = -std::numeric_limits<float>::infinity();
    return;
  }
  for (int i = 0; i < s.head_dim; ++i) o[i] = acc[static_cast<size_t>(i)] / denominator;
  lse = running_max + std::log(denominator);
}

}  // namespace

void partial_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q, const std::uint16_t* k,
                       const std::uint16_t* v, long long tokens, float* o, float* lse) {
  check_shape(shape);
  if (tokens < 0) throw std::invalid_argument("partial_attention: a negative number of tokens");
  const int group = shape.query_heads / shape.kv_heads;
  std::vector<float> q_float(static_cast<size_t>(shape.head_dim));
  std::vector<float> acc(static_cast<size_t>(shape.head_dim));
  for (int b = 0; b < shape.batch; ++b) {
    for (int h = 0; h < shape.query_heads; ++h) {
      const long long state = static_cast<long long>(b) * shape.query_heads + h;
      for (int i = 0; i < shape.head_dim; ++i) q_float[static_cast<size_t>(i)] = from_half(dtype, q[state * shape.head_dim + i]);
      const long long kv_offset = (static_cast<long long>(b) * shape.kv_heads + h / group) * shape.head_dim;
      one_head(shape, dtype, q_float.data(), k, v, tokens, kv_offset, o + state * shape.head_dim, lse[state], acc);
    }
  }
}

std::vector<double> reference_attention(const AttentionShape& shape, Dtype dtype, const std::uint16_t* q,
                                        const std::uint16_t* k, const std::uint16_t* v, long long tokens) {
  check_shape(shape);
  const int group = shape.query_heads / shape.kv_heads;
  const long long stride = shape.kv_values_per_token();
  std::vector<double> o(static_cast<size_t>(shape.q_values()), 0.0);
  std::vector<double> scores(static_cast<size_t>(tokens));
  for (int b = 0; b < shape.batch; ++b) {
    for (int h = 0; h < shape.query_heads; ++h) {
      const long long state = static_cast<long long>(b) * shape.query_heads + h;
      const long long kv_offset = (static_cast<long long>(b) * shape.kv_heads + h / group) * shape.head_dim;
      double top = -std::numeric_limits<double>::infinity();
      for (long long t = 0; t < tokens; ++t) {
        double score = 0;
        for (int i = 0; i < shape.head_dim; ++i) {
          score += static_cast<double>(from_half(dtype, q[state * shape.head_dim + i])) * from_half(dtype, k[t * stride + kv_offset + i]);
        }
        scores[static_cast<size_t>(t)] = score / std::sqrt(static_cast<double>(shape.head_dim));
        top = std::max(top, scores[static_cast<size_t>(t)]);
      }
      double sum = 0;
      for (long long t = 0; t < tokens; ++t) sum += std::exp(scores[static_cast<size_t>(t)] - top);
      for (long long t = 0; t < tokens; ++t) {
        const double weight = std::exp(scores[static_cast<size_t>(t)] - top) / sum;
        for (int i = 0; i < shape.head_dim; ++i) {
          o[static_cast<size_t>(state * shape.head_dim + i)] += weight * from_half(dtype, v[t * stride + kv_offset + i]);
        }
      }
    }
  }
  return o;
}

double max_relative_error(const float* values, const std::vector<double>& reference, int head_dim) {
  double worst = 0;
  for (size_t head = 0; head + static_cast<size_t>(head_dim) <= reference.size(); head += static_cast<size_t>(head_dim)) {
    double largest = 0, error = 0;
    for (size_t i = head; i < head + static_cast<size_t>(head_dim); ++i) {
      largest = std::max(largest, std::abs(reference[i]));
      error = std::max(error, std::abs(values[i] - reference[i]));
    }
    worst = std::max(worst, largest > 0 ? error / largest : error);
  }
  return worst;
}

}  // namespace treering::realrun
