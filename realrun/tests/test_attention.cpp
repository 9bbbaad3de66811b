// The partial attention kernel, the merge rule and the reference: hand cases, then splits of random inputs
// merged back against the double-precision reference.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "treering/realrun/attention.hpp"
#include "random_inputs.hpp"
#include "treering/realrun/merge.hpp"

using namespace treering::realrun;
using treering::realrun::testing::random_halves;

TEST_CASE("merge rule: equal weights, the empty state, and a worked example") {
  // lse_a = lse_b = 0: each state one token of score 0 -> lse = ln 2, o = the mean.
  float o[2] = {1.0f, 3.0f};
  float lse = 0;
  const float o_b[2] = {3.0f, 5.0f};
  merge_state(o, lse, o_b, 0.0f, 2);
  CHECK(lse == doctest::Approx(std::log(2.0)).scale(1e-12));
  CHECK(o[0] == doctest::Approx(2.0).scale(1e-12));
  CHECK(o[1] == doctest::Approx(4.0).scale(1e-12));
  // Scores 0 and ln 3 (weights 1 and 3 of 4), values 1 and 5: o = (1 + 15) / 4 = 4, lse = ln(1 + 3) = ln 4.
  float single[1] = {1.0f};
  float lse_single = 0.0f;
  const float five[1] = {5.0f};
  merge_state(single, lse_single, five, std::log(3.0f), 1);
  CHECK(single[0] == doctest::Approx(4.0).scale(1e-12));
  CHECK(lse_single == doctest::Approx(std::log(4.0)).scale(1e-12));
  // The empty state (lse -inf) changes nothing, on either side.
  const float negative_infinity = -std::numeric_limits<float>::infinity();
  float kept[1] = {7.0f};
  float lse_kept = 1.5f;
  const float nothing[1] = {0.0f};
  merge_state(kept, lse_kept, nothing, negative_infinity, 1);
  CHECK(kept[0] == 7.0f);
  CHECK(lse_kept == 1.5f);
  float empty[1] = {0.0f};
  float lse_empty = negative_infinity;
  merge_state(empty, lse_empty, kept, 1.5f, 1);
  CHECK(empty[0] == doctest::Approx(7.0).scale(1e-12));
  CHECK(lse_empty == doctest::Approx(1.5).scale(1e-12));
}

TEST_CASE("one token: o is its V, lse its score; two equal scores: the mean") {
  const AttentionShape shape{1, 1, 1, 4};
  const Dtype dtype = Dtype::fp16;
  // q = (1, 0, 0, 0), k0 = (2, 0, 0, 0): score 2 / sqrt(4) = 1.
  std::vector<std::uint16_t> q{to_half(dtype, 1), 0, 0, 0};
  std::vector<std::uint16_t> k{to_half(dtype, 2), 0, 0, 0, to_half(dtype, 2), 0, 0, 0};
  std::vector<std::uint16_t> v{to_half(dtype, 1), to_half(dtype, 2), to_half(dtype, 3), to_half(dtype, 4),
                               to_half(dtype, 3), to_half(dtype, 2), to_half(dtype, 1), to_half(dtype, 0)};
  float o[4];
  float lse = 0;
  partial_attention(shape, dtype, q.data(), k.data(), v.data(), 1, o, &lse);
  CHECK(lse == doctest::Approx(1.0).scale(1e-12));
  CHECK(o[3] == doctest::Approx(4.0).scale(1e-12));
  partial_attention(shape, dtype, q.data(), k.data(), v.data(), 2, o, &lse);
  CHECK(lse == doctest::Approx(1.0 + std::log(2.0)).scale(1e-12));  // two tokens of score 1
  for (int i = 0; i < 4; ++i) CHECK(o[i] == doctest::Approx(2.0).scale(1e-12));
  partial_attention(shape, dtype, q.data(), k.data(), v.data(), 0, o, &lse);
  CHECK(lse == -std::numeric_limits<float>::infinity());
}

TEST_CASE("shards merged back equal the reference to 1e-5: bf16 and fp16, head dims 64 and 128, GQA") {
  for (Dtype dtype : {Dtype::bf16, Dtype::fp16}) {
    for (const AttentionShape shape :
         {AttentionShape{2, 4, 2, 64}, AttentionShape{1, 8, 1, 128}, AttentionShape{3, 2, 2, 64}}) {
      const long long tokens = 301;
      const auto q = random_halves(dtype, static_cast<size_t>(shape.q_values()), 1);
      const auto k = random_halves(dtype, static_cast<size_t>(tokens * shape.kv_values_per_token()), 2);
      const auto v = random_halves(dtype, static_cast<size_t>(tokens * shape.kv_values_per_token()), 3);
      const std::vector<double> reference = reference_attention(shape, dtype, q.data(), k.data(), v.data(), tokens);
      // Uneven shards, one of them empty: 0-100, 100-100, 100-250, 250-301.
      std::vector<float> o(static_cast<size_t>(shape.q_values()));
      std::vector<float> lse(static_cast<size_t>(shape.states()), -std::numeric_limits<float>::infinity());
      std::vector<float> part_o(o.size());
      std::vector<float> part_lse(lse.size());
      long long previous = 0;
      for (long long end : {100LL, 100LL, 250LL, 301LL}) {
        const long long offset = previous * shape.kv_values_per_token();
        partial_attention(shape, dtype, q.data(), k.data() + offset, v.data() + offset, end - previous, part_o.data(),
                          part_lse.data());
        for (long long s = 0; s < shape.states(); ++s) {
          merge_state(o.data() + s * shape.head_dim, lse[static_cast<size_t>(s)], part_o.data() + s * shape.head_dim,
                      part_lse[static_cast<size_t>(s)], shape.head_dim);
        }
        previous = end;
      }
      CAPTURE(shape.head_dim);
      CHECK(max_relative_error(o.data(), reference, shape.head_dim) < 1e-5);
      partial_attention(shape, dtype, q.data(), k.data(), v.data(), tokens, part_o.data(), part_lse.data());
      CHECK(max_relative_error(part_o.data(), reference, shape.head_dim) < 1e-5);
    }
  }
  CHECK_THROWS_AS(check_shape({1, 6, 4, 64}), std::invalid_argument);  // 6 query heads over 4 KV heads
  // The error measure itself: ref (1, 0.001), o (1, 0.0011) -> 1e-4 of the head's largest value.
  const float o[2] = {1.0f, 0.0011f};
  CHECK(max_relative_error(o, {1.0, 0.001}, 2) == doctest::Approx(1e-4).scale(1e-12).epsilon(1e-3));
}

TEST_CASE("merging many states at once equals merging them pairwise (the device's form)") {
  // Three states, lse 0, ln 3 and -inf (empty): merged lse ln 4, weights 1/4, 3/4, 0.
  const float lse[3] = {0.0f, std::log(3.0f), -std::numeric_limits<float>::infinity()};
  const float merged = merged_lse(lse, 3);
  CHECK(merged == doctest::Approx(std::log(4.0)).scale(1e-12));
  CHECK(state_weight(lse[0], merged) == doctest::Approx(0.25).scale(1e-12));
  CHECK(state_weight(lse[1], merged) == doctest::Approx(0.75).scale(1e-12));
  CHECK(state_weight(lse[2], merged) == 0.0f);
  float o[1] = {0.0f};
  float pairwise = -std::numeric_limits<float>::infinity();
  const float values[3] = {1.0f, 5.0f, 9.0f};
  for (int s = 0; s < 3; ++s) merge_state(o, pairwise, values + s, lse[s], 1);
  CHECK(pairwise == doctest::Approx(merged).scale(1e-12));
  CHECK(o[0] == doctest::Approx(0.25 * 1 + 0.75 * 5).scale(1e-12));
  const float empty[2] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  CHECK(merged_lse(empty, 2) == -std::numeric_limits<float>::infinity());
  CHECK(state_weight(0.0f, merged_lse(empty, 2)) == 0.0f);
}

TEST_CASE("a NaN or an infinity in an output is an infinite error, never skipped") {
  // std::max(error, NaN) keeps error: without the check a NaN output would pass. Reference one head of 2.
  const std::vector<double> reference{1.0, 0.001};
  const float fine[] = {1.0f, 0.0011f};
  CHECK(max_relative_error(fine, reference, 2) == doctest::Approx(1e-4).scale(1e-12).epsilon(1e-3));
  const float nan[] = {std::numeric_limits<float>::quiet_NaN(), 0.001f};
  const float inf[] = {1.0f, std::numeric_limits<float>::infinity()};
  CHECK(max_relative_error(nan, reference, 2) == std::numeric_limits<double>::infinity());
  CHECK(max_relative_error(inf, reference, 2) == std::numeric_limits<double>::infinity());
  const float mixed[] = {1.0f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(), 0.0f};
  CHECK(count_non_finite(mixed, 4) == 2);
  CHECK(count_non_finite(fine, 2) == 0);
}
