// The tensor-core kernel's indexing and arithmetic (split_kv.hpp), checked on the CPU: the split heuristic, the
// coverage of tokens, copies and heads, the shared-memory swizzle against bank conflicts, the ldmatrix rows, and
// the online-softmax step and merges by hand. (The kernel emulated lane by lane: test_split_kv_emulation.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <vector>

#include "treering/model/attention_kernel.hpp"
#include "treering/realrun/attention.hpp"
#include "treering/realrun/split_kv.hpp"

using namespace treering::realrun;
using namespace treering::realrun::split_kv;

TEST_CASE("the model's split-KV geometry is the kernel's: the same chunks for every shape, SM count and length") {
  // model/attention_kernel.hpp restates the launch rule for the cost model (which cannot see realrun); 2 resident
  // CTAs per SM is what the occupancy calculator gives the 96 KB kernel on an H100.
  for (int sms : {108, 132}) {
    for (int batch : {1, 3, 64}) {
      for (int group : {1, 4, 16, 32}) {
        for (int head_dim : {64, 128}) {
          for (long long tokens : {1LL, 63LL, 64LL, 1000LL, 2112LL, 131072LL, 1000000LL}) {
            const treering::model::SplitKvShape shape{batch, 8, group, head_dim};
            const long long ctas = static_cast<long long>(batch) * 8 * head_blocks(8 * group, 8);
            CHECK(treering::model::split_kv_ctas(shape) == ctas);
            CHECK(treering::model::split_kv_chunks(shape, sms, tokens) ==
                  choose_chunks(sms, treering::model::kSplitKvResidentCtas, ctas, tokens, head_dim));
          }
        }
      }
    }
  }
  CHECK(treering::model::kSplitKvQueryRows == kRows);
  CHECK(treering::model::kSplitKvTileValues / 128 == cta_tile_tokens(128));
}

TEST_CASE("choose_chunks: the worked examples") {
  CHECK(choose_chunks(132, 2, 8, 131072, 128) == 33);   // 264 CTA places / 8 CTAs
  CHECK(choose_chunks(132, 2, 16, 131072, 128) == 16);  // floor(264 / 16): no partial second wave
  CHECK(choose_chunks(132, 2, 8, 1024, 128) == 16);     // 1,024 / 64-token CTA tiles
  CHECK(choose_chunks(132, 2, 8, 1024, 64) == 8);       // d 64: 128-token tiles
  CHECK(choose_chunks(132, 2, 512, 131072, 128) == 1);  // the batch alone fills the device
  CHECK(choose_chunks(132, 2, 8, 10, 128) == 1);
  CHECK(choose_chunks(132, 2, 8, 0, 128) == 1);
  CHECK(choose_chunks(1 << 20, 2, 1, 1LL << 40, 128) == kMaxChunks);
}

TEST_CASE("choose_chunks fills one wave without a partial second one, with chunks of at least one CTA tile") {
  for (int sms : {1, 78, 108, 132, 304}) {
    for (int resident : {1, 2, 3}) {
      for (long long ctas : {1LL, 8LL, 16LL, 64LL, 100LL, 1000LL}) {
        for (long long tokens : {1LL, 100LL, 1000LL, 16384LL, 131072LL, 4000000LL}) {
          for (int d : {64, 128}) {
            const int chunks = choose_chunks(sms, resident, ctas, tokens, d);
            CAPTURE(sms);
            CAPTURE(resident);
            CAPTURE(ctas);
            CAPTURE(tokens);
            const long long places = static_cast<long long>(sms) * resident;
            CHECK(chunks >= 1);
            if (chunks > 1) {
              CHECK(ctas * chunks <= places);
              CHECK(tokens / chunks >= cta_tile_tokens(d));
            }
            if (tokens >= (places / ctas + 1) * cta_tile_tokens(d) && ctas <= places)
              CHECK(ctas * (chunks + 1) > places);
          }
        }
      }
    }
  }
}

TEST_CASE("chunk_range cuts the tokens into consecutive chunks of whole warp tiles") {
  CHECK(chunk_range(1000, 3, 0, 128).end == 336);  // ceil(1000 / 3) = 334 -> 21 tiles of 16
  CHECK(chunk_range(1000, 3, 2, 128).begin == 672);
  CHECK(chunk_range(1000, 3, 2, 128).end == 1000);
  for (int d : {64, 128}) {
    for (long long tokens : {0LL, 1LL, 15LL, 100LL, 1001LL, 131072LL}) {
      for (int chunks : {1, 2, 7, 33, 200}) {
        long long next = 0;
        for (int c = 0; c < chunks; ++c) {
          const TokenRange range = chunk_range(tokens, chunks, c, d);
          CHECK(range.begin == next);
          CHECK(range.end >= range.begin);
          if (range.end < tokens) CHECK((range.end - range.begin) % warp_tile_tokens(d) == 0);
          next = range.end;
        }
        CHECK(next == tokens);
      }
    }
  }
}

TEST_CASE("a CTA's warps take every token of a chunk once, and a tile's copies every slot once") {
  CHECK(warp_tiles(128, 0, 100) == 2);  // tiles at 0 and 64
  CHECK(warp_tiles(128, 2, 100) == 2);  // at 32 and 96 (4 tokens of it)
  CHECK(warp_tiles(128, 3, 100) == 1);  // at 48
  CHECK(warp_tiles(128, 3, 40) == 0);
  for (int d : {64, 128}) {
    for (long long length : {0LL, 1LL, 16LL, 17LL, 100LL, 1000LL}) {
      std::vector<int> visits(static_cast<size_t>(length), 0);
      for (int warp = 0; warp < kWarps; ++warp) {
        for (long long tile = 0; tile < warp_tiles(d, warp, length); ++tile) {
          for (int t = 0; t < warp_tile_tokens(d); ++t) {
            const long long token = warp_tile_begin(d, warp, tile) + t;
            CHECK(token < length + warp_tile_tokens(d));
            if (token < length) ++visits[static_cast<size_t>(token)];
          }
        }
      }
      for (int count : visits) CHECK(count == 1);
    }
    std::set<int> pieces, places;
    for (int step = 0; step < copy_steps(d); ++step) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const TilePlace p = copy_piece(d, step, lane);
        CHECK(pieces.insert(p.row * slots_per_row(d) + p.slot).second);
        CHECK(places.insert(swizzled_slot(d, p.row, p.slot)).second);  // the swizzle is one-to-one
        CHECK(swizzled_slot(d, p.row, p.slot) < warp_tile_tokens(d) * slots_per_row(d));
      }
    }
    CHECK(static_cast<int>(pieces.size()) == warp_tile_tokens(d) * slots_per_row(d));
  }
  CHECK(swizzled_slot(128, 5, 2) == 87);
  CHECK(copy_piece(128, 3, 20).row == 7);
  CHECK(copy_piece(128, 3, 20).slot == 4);
}

TEST_CASE("each ldmatrix reads 8 rows of one slot from 8 different bank groups, and covers its 16 x 16 block") {
  CHECK(k_matrix_row(3, 1, 21).row == 29);
  CHECK(k_matrix_row(3, 1, 21).slot == 6);
  CHECK(v_matrix_row(2, 0, 13).row == 13);
  CHECK(v_matrix_row(2, 0, 13).slot == 4);
  for (int d : {64, 128}) {
    for (int u = 0; u < warp_tile_tokens(d) / 16; ++u) {
      for (int step = 0; step < d / 16; ++step) {
        for (bool for_v : {false, true}) {
          std::set<std::pair<int, int>> covered;
          for (int m = 0; m < 4; ++m) {
            std::set<int> bank_groups;  // 32 banks of 4 bytes: 8 groups of 16 bytes
            for (int r = 0; r < 8; ++r) {
              const TilePlace p = for_v ? v_matrix_row(step, u, 8 * m + r) : k_matrix_row(step, u, 8 * m + r);
              CHECK(bank_groups.insert(swizzled_slot(d, p.row, p.slot) % 8).second);
              CHECK(p.row == 16 * u + (for_v ? (m % 2) * 8 : (m / 2) * 8) + r);  // rows in order: the matrix's row r
              covered.insert({p.row, p.slot});
            }
          }
          CHECK(covered.size() == 32u);  // 16 tokens x 2 slots (16 head-dim values)
        }
      }
    }
  }
}

TEST_CASE("the fragment maps: accumulators of 16 tokens are the A registers of the same 16 tokens") {
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int j = 0; j < 4; ++j) {
      for (int h = 0; h < 2; ++h) {
        const int n = j / 2, i = 2 * (j % 2) + h;  // the accumulator split_weights takes for A register j, half h
        CHECK(a_row(lane, j) == accumulator_row(lane, i));
        CHECK(a_col(lane, j, h) == 8 * n + accumulator_col(lane, i));
      }
    }
  }
}

TEST_CASE("the CTAs serve every (sequence, query head) once, each with its KV head") {
  CHECK(head_blocks(32, 4) == 1);
  CHECK(head_blocks(40, 1) == 3);
  CHECK(cta_place(6, 32, 4).sequence == 1);
  CHECK(cta_place(6, 32, 4).kv_head == 2);
  CHECK(cta_place(6, 32, 4).first_query_head == 16);
  CHECK(cta_place(6, 32, 4).rows == 8);
  CHECK(cta_place(2, 40, 1).rows == 8);
  for (const AttentionShape shape :
       {AttentionShape{3, 32, 4, 128}, AttentionShape{2, 128, 8, 128}, AttentionShape{2, 12, 2, 64},
        AttentionShape{1, 40, 1, 64}, AttentionShape{2, 16, 16, 128}}) {
    std::set<long long> served;
    const int ctas = shape.batch * shape.kv_heads * head_blocks(shape.query_heads, shape.kv_heads);
    for (int cta = 0; cta < ctas; ++cta) {
      const CtaPlace place = cta_place(cta, shape.query_heads, shape.kv_heads);
      CHECK(place.rows >= 1);
      CHECK(place.rows <= kRows);
      for (int j = 0; j < place.rows; ++j) {
        const int h = place.first_query_head + j;
        CHECK(h / (shape.query_heads / shape.kv_heads) == place.kv_head);
        CHECK(served.insert(static_cast<long long>(place.sequence) * shape.query_heads + h).second);
      }
    }
    CHECK(static_cast<long long>(served.size()) == shape.states());
  }
}

TEST_CASE("row_step and merge_groups: the worked examples") {
  const RowStep step = row_step(1.0f, 3.0f);
  CHECK(step.top == 3.0f);
  CHECK(step.rescale == doctest::Approx(0.25).scale(1e-12));
  CHECK(step.offset == 3.0f);
  const RowStep masked = row_step(-INFINITY, -INFINITY);  // only masked tokens so far: nothing becomes NaN
  CHECK(masked.top == -INFINITY);
  CHECK(masked.rescale == 0.0f);
  CHECK(exp2f(-INFINITY - masked.offset) == 0.0f);
  CHECK(row_step(2.0f, -INFINITY).rescale == 1.0f);
  const float group_m2[2] = {0, 1}, group_l[2] = {1, 1};
  const GroupMerge merge = merge_groups(group_m2, group_l, 2, 1);
  CHECK(merge.weight(0, 1) == doctest::Approx(1.0 / 3.0).scale(1e-12));
  CHECK(merge.weight(1, 1) == doctest::Approx(2.0 / 3.0).scale(1e-12));
  CHECK(merge.lse() == doctest::Approx(std::log(3.0)).scale(1e-12));
  const float empty_m2[1] = {-INFINITY}, empty_l[1] = {0};
  CHECK(merge_groups(empty_m2, empty_l, 1, 1).lse() == -INFINITY);
}
