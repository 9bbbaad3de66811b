// The CUDA kernel's indexing and arithmetic (split_kv.hpp), checked on the CPU: the split heuristic, the
// coverage of tokens, lanes and heads, the online softmax and merges by hand, and the kernel emulated thread by
// thread against the double-precision reference and the CPU kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <vector>

#include "random_inputs.hpp"
#include "split_kv_emulation.hpp"
#include "treering/realrun/split_kv.hpp"

using namespace treering::realrun;
using namespace treering::realrun::split_kv;

TEST_CASE("choose_chunks: the worked examples") {
  CHECK(choose_chunks(132, 4, 16, 2048) == 66);      // ceil(2 x 132 x 4 / 16) = 66 (chunks of 32 tokens)
  CHECK(choose_chunks(132, 4, 16, 100000) == 66);
  CHECK(choose_chunks(132, 4, 512, 100000) == 3);    // ceil(1056 / 512) = 3
  CHECK(choose_chunks(132, 4, 4096, 100000) == 1);   // the batch alone fills the device
  CHECK(choose_chunks(132, 4, 16, 100) == 6);        // 100 / 16 = 6 chunks of at least 16 tokens
  CHECK(choose_chunks(132, 4, 16, 10) == 1);
  CHECK(choose_chunks(132, 4, 16, 0) == 1);
  CHECK(choose_chunks(132, 2048, 1, 1LL << 40) == kMaxChunks);
}

TEST_CASE("choose_chunks gives two waves of CTAs whenever the tokens allow chunks of 16") {
  for (int sms : {1, 78, 108, 132, 304}) {
    for (int resident : {1, 2, 4, 8}) {
      for (long long ctas : {1LL, 8LL, 16LL, 64LL, 100LL, 1000LL, 5000LL}) {
        for (long long tokens : {1LL, 100LL, 1000LL, 2048LL, 16384LL, 131072LL, 4000000LL}) {
          const int chunks = choose_chunks(sms, resident, ctas, tokens);
          CAPTURE(sms);
          CAPTURE(resident);
          CAPTURE(ctas);
          CAPTURE(tokens);
          const long long two_waves = 2LL * sms * resident;
          const long long wanted = (two_waves + ctas - 1) / ctas;
          if (tokens >= wanted * kMinChunkTokens) CHECK(ctas * chunks >= two_waves);
          else CHECK((chunks == 1 || tokens / chunks >= kMinChunkTokens));
          CHECK(ctas * (chunks - 1) < two_waves);  // never more than needed
        }
      }
    }
  }
}

TEST_CASE("chunk_range cuts the tokens into consecutive, disjoint chunks") {
  CHECK(chunk_range(100, 7, 6).begin == 90);
  CHECK(chunk_range(100, 7, 6).end == 100);
  for (long long tokens : {0LL, 1LL, 15LL, 100LL, 1001LL}) {
    for (int chunks : {1, 2, 7, 66, 200}) {
      long long next = 0;
      for (int c = 0; c < chunks; ++c) {
        const TokenRange range = chunk_range(tokens, chunks, c);
        CHECK(range.begin == next);
        CHECK(range.end >= range.begin);
        next = range.end;
      }
      CHECK(next == tokens);
    }
  }
}

TEST_CASE("a CTA's lane groups, slots and tiles visit every token of a chunk once, and the lanes every value") {
  for (int d : {64, 128}) {
    CHECK(lane_place(128, 1, 21).group == 3);
    CHECK(lane_place(128, 1, 21).first_value == 40);
    CHECK(token_at(64, 128, 1, 2, 5) == 117);
    for (const TokenRange range : {TokenRange{0, 1}, TokenRange{64, 117}, TokenRange{10, 1000}}) {
      std::vector<int> visits(static_cast<size_t>(range.end), 0);
      for (long long tile = 0; token_at(range.begin, d, tile, 0, 0) < range.end; ++tile) {
        for (int group = 0; group < groups_per_cta(d); ++group) {
          for (int slot = 0; slot < kTokensInFlight; ++slot) {
            const long long token = token_at(range.begin, d, tile, slot, group);
            if (token < range.end) ++visits[static_cast<size_t>(token)];
          }
        }
      }
      for (long long t = 0; t < range.end; ++t) CHECK(visits[static_cast<size_t>(t)] == (t >= range.begin ? 1 : 0));
    }
    std::vector<std::set<int>> values(static_cast<size_t>(groups_per_cta(d)));
    for (int warp = 0; warp < kWarps; ++warp) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const LanePlace place = lane_place(d, warp, lane);
        for (int i = 0; i < kValuesPerLoad; ++i) CHECK(values[static_cast<size_t>(place.group)].insert(place.first_value + i).second);
      }
    }
    for (const auto& group : values) CHECK(group.size() == static_cast<size_t>(d));
  }
}

TEST_CASE("the CTAs serve every (sequence, query head) once, each with its KV head") {
  CHECK(heads_per_cta(32, 4) == 8);
  CHECK(heads_per_cta(128, 8) == 8);  // g = 16: two CTAs per KV head
  CHECK(heads_per_cta(12, 2) == 2);   // g = 6
  CHECK(heads_per_cta(16, 16) == 1);
  CHECK(cta_place(6, 32, 4).sequence == 1);
  CHECK(cta_place(6, 32, 4).kv_head == 2);
  CHECK(cta_place(6, 32, 4).first_query_head == 16);
  for (const AttentionShape shape : {AttentionShape{3, 32, 4, 128}, AttentionShape{2, 128, 8, 128}, AttentionShape{2, 12, 2, 64}}) {
    const int heads = heads_per_cta(shape.query_heads, shape.kv_heads);
    std::set<long long> served;
    for (int cta = 0; cta < shape.states() / heads; ++cta) {
      const CtaPlace place = cta_place(cta, shape.query_heads, shape.kv_heads);
      for (int j = 0; j < heads; ++j) {
        const int h = place.first_query_head + j;
        CHECK(h / (shape.query_heads / shape.kv_heads) == place.kv_head);
        CHECK(served.insert(static_cast<long long>(place.sequence) * shape.query_heads + h).second);
      }
    }
    CHECK(static_cast<long long>(served.size()) == shape.states());
  }
}

TEST_CASE("online_softmax_tile and merge_groups: the worked examples") {
  float m2 = 0, l = 1, acc[kValuesPerLoad] = {1, 0, 0, 0, 0, 0, 0, 0};
  const float scores[kTokensInFlight] = {1, 99, 99, 99};  // only the first is valid
  const float values[kTokensInFlight][kValuesPerLoad] = {{3}, {99}, {99}, {99}};
  online_softmax_tile(m2, l, acc, scores, values, 1);
  CHECK(m2 == 1.0f);
  CHECK(l == doctest::Approx(1.5));
  CHECK(acc[0] / l == doctest::Approx(7.0 / 3.0));  // weights 2^0 and 2^1 of the values 1 and 3
  const float group_m2[2] = {0, 1}, group_l[2] = {1, 1};
  const GroupMerge merge = merge_groups(group_m2, group_l, 2, 1);
  CHECK(merge.weight(0, 1) == doctest::Approx(1.0 / 3.0));
  CHECK(merge.weight(1, 1) == doctest::Approx(2.0 / 3.0));
  CHECK(merge.lse() == doctest::Approx(std::log(3.0)));
  const float empty_m2[1] = {-INFINITY}, empty_l[1] = {0};
  CHECK(merge_groups(empty_m2, empty_l, 1, 1).lse() == -INFINITY);
}
