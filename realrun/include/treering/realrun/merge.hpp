// The merge rule for partial attention states, one piece of code for the host and the device (nvcc compiles it
// for both). A state is the normalised partial output o (head_dim values) and its log-sum-exp lse, natural
// log: lse = m + ln(sum_t exp(s_t - m)) over the scores s_t = q.k_t / sqrt(d) of the tokens it covers, and
// o = sum_t exp(s_t - lse) v_t. Two states over disjoint tokens merge into the state over both:
//   lse = ln(exp(lse_a) + exp(lse_b)) = M + ln(exp(lse_a - M) + exp(lse_b - M)),  M = max(lse_a, lse_b)
//   o   = o_a exp(lse_a - lse) + o_b exp(lse_b - lse)
// An empty state (no tokens) has lse = -inf and merges as the identity.
// Example: lse_a = lse_b = 0 (each one token of score 0) -> lse = ln 2, o = (o_a + o_b) / 2.
#pragma once

#include <cmath>
#include <limits>

#if defined(__CUDACC__)
#define TREERING_HOST_DEVICE __host__ __device__
#else
#define TREERING_HOST_DEVICE
#endif

namespace treering::realrun {

// The weights of the two states in the merged one, and the merged lse.
struct MergeWeights {
  float a = 0;
  float b = 0;
  float lse = 0;
};

TREERING_HOST_DEVICE inline MergeWeights merge_weights(float lse_a, float lse_b) {
  const float negative_infinity = -std::numeric_limits<float>::infinity();
  if (lse_a == negative_infinity && lse_b == negative_infinity) return {0.0f, 0.0f, negative_infinity};
  const float top = lse_a > lse_b ? lse_a : lse_b;
  const float ea = expf(lse_a - top);  // one of the two is exp(0) = 1; exp(-inf) = 0
  const float eb = expf(lse_b - top);
  const float sum = ea + eb;
  return {ea / sum, eb / sum, top + logf(sum)};
}

// Merges state b (o_b, lse_b) into the accumulator (o, lse), `head_dim` values.
TREERING_HOST_DEVICE inline void merge_state(float* o, float& lse, const float* o_b, float lse_b, int head_dim) {
  const MergeWeights w = merge_weights(lse, lse_b);
  for (int i = 0; i < head_dim; ++i) o[i] = w.a * o[i] + w.b * o_b[i];
  lse = w.lse;
}

// Many states at once (the device merges its chunks this way: the loads are independent): the merged lse of
// `count` states, lse = M + ln(sum_s exp(lse_s - M)), M the largest; then each state's weight in the merged o is
// exp(lse_s - lse). The same result as merging them pairwise. Empty states (-inf) weigh 0; all empty: -inf.
TREERING_HOST_DEVICE inline float merged_lse(const float* lse, int count, long long stride = 1) {
  float top = -std::numeric_limits<float>::infinity();
  for (int s = 0; s < count; ++s) top = lse[s * stride] > top ? lse[s * stride] : top;
  if (top == -std::numeric_limits<float>::infinity()) return top;
  float sum = 0.0f;
  for (int s = 0; s < count; ++s) sum += expf(lse[s * stride] - top);
  return top + logf(sum);
}

TREERING_HOST_DEVICE inline float state_weight(float lse_state, float lse_merged) {
  return lse_merged == -std::numeric_limits<float>::infinity() ? 0.0f : expf(lse_state - lse_merged);
}

}  // namespace treering::realrun
