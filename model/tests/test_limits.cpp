// The model's arithmetic at the limits: 2^20 GPUs and 10^10 tokens, counts in 64 bits, bytes exact in doubles.
#include <doctest/doctest.h>

#include <numeric>

#include "treering/model/plan.hpp"

using namespace treering::model;

TEST_CASE("10^10 tokens over 2^20 GPUs: shards add up, none overflows") {
  // 10^10 / 1,048,576 = 9,536 rest 779,264 (10^10 - 9,536 x 1,048,576): the first 779,264 ranks hold 9,537.
  const int gpus = 1 << 20;
  const std::vector<Shard> shards = split_tokens(10'000'000'000LL, gpus);
  CHECK(shards[0].count == 9537);
  CHECK(shards[779263].count == 9537);
  CHECK(shards[779264].count == 9536);
  CHECK(shards.back().first + shards.back().count == 10'000'000'000LL);
  long long total = 0;
  for (const Shard& s : shards) total += s.count;
  CHECK(total == 10'000'000'000LL);
}

TEST_CASE("a ring of 2^20 GPUs over 10^10 tokens: each rank's bytes exact") {
  // Rank 0 forwards every block but rank 1's own: (10^10 - 9,537) x 8,192 B = 81,919,921,872,896 B, below 2^53,
  // so a double holds it exactly.
  const int gpus = 1 << 20;
  std::vector<int> ranks(static_cast<size_t>(gpus)), domains(static_cast<size_t>(gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  for (int r = 0; r < gpus; ++r) domains[static_cast<size_t>(r)] = r / 8;
  const DecodePlan plan =
      make_plan(DecodeAlgorithm::ring, find_workload("paper-mha16"), 10'000'000'000LL, ranks, domains);
  const std::vector<double> sent = bytes_sent_per_rank(plan);
  CHECK(sent[0] == 81'919'921'872'896.0);
  double total = 0;
  for (double bytes : sent) total += bytes;
  // Every rank forwards N minus its successor's shard: p N - N tokens in all.
  CHECK(total == doctest::Approx((static_cast<double>(gpus) - 1) * 1e10 * 8192).scale(1e-12).epsilon(1e-15));
}

TEST_CASE("tree-lse plans for 2^20 GPUs: the transfers stay within the ranks") {
  const int gpus = 1 << 20;
  std::vector<int> ranks(static_cast<size_t>(gpus)), domains(static_cast<size_t>(gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  for (int r = 0; r < gpus; ++r) domains[static_cast<size_t>(r)] = r / 8;
  const DecodePlan plan =
      make_plan(DecodeAlgorithm::tree_lse, find_workload("paper-mha16"), 10'000'000'000LL, ranks, domains);
  long long transfers = 0, outside = 0;
  for (const Phase& phase : plan.phases) {
    for (const Transfer& t : phase.sends) {
      outside += (t.from < 0 || t.from >= gpus || t.to < 0 || t.to >= gpus) ? 1 : 0;
      ++transfers;
    }
  }
  CHECK(outside == 0);
  // Reduce and broadcast each move p - 1 states: 2 (2^20 - 1) transfers.
  CHECK(transfers == 2 * (static_cast<long long>(gpus) - 1));
}
