// Splitting the KV cache by speed: equal GPUs get the equal split, faster GPUs more tokens, the slowest GPU's
// attention as short as it can be.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

TEST_CASE("split_by_speed: equal GPUs get split_tokens's counts") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology);
  const model::Workload& w = model::find_workload("paper-mha16");
  std::vector<model::ComputeRates> rates(8, decode.rates(0));
  const std::vector<long long> counts = model::split_by_speed(1000003, rates, w, model::plan_sizes(w, 4));
  const std::vector<model::Shard> equal = model::split_tokens(1000003, 8);
  for (size_t i = 0; i < 8; ++i) CHECK(counts[i] == equal[i].count);
}

TEST_CASE("split_by_speed: an H100 and an H200 share in proportion to their memory bandwidth") {
  // Same launch overhead and efficiency; attention = launch + (n x 8 KiB + 8,256 B) / (hbm x 0.8). Equal times
  // give n_100 / n_200 = 3.35 / 4.8 but for the fixed 8,256 B: n_100 = 1M x 3.35 / 8.15 = 411,043 (+-2).
  const topologies::Topology topology =
      topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel decode(topology);
  const model::Workload& w = model::find_workload("paper-mha16");
  const model::ComputeRates h100 = decode.rates(0), h200 = decode.rates(64);
  REQUIRE(h200.hbm_Bps / h100.hbm_Bps == doctest::Approx(4.8 / 3.35).scale(1e-12));
  const std::vector<long long> counts = model::split_by_speed(1000000, {h100, h200}, w, model::plan_sizes(w, 4));
  CHECK(counts[0] + counts[1] == 1000000);
  CHECK(std::abs(counts[0] - 411043) <= 2);
}

TEST_CASE("by-speed on the mixed H100 + H200 cluster: tree's attention shrinks to the balanced time; the ring loses") {
  // 64 H100 + 64 H200, 1M tokens. Equal split: 7,813 tokens each, the H100s set the pace. Balanced: all finish
  // together at T with sum over GPUs of T x hbm_i = 1M x 8 KiB (launch aside): T = 1M x 8 KiB / (64 x 0.8 x
  // (3.35 + 4.8) TB/s) = 19.6 us + launch, against 7,813 x 8 KiB / (0.8 x 3.35 TB/s) = 23.9 us + launch.
  const topologies::Topology topology =
      topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel decode(topology);
  const model::Workload& w = model::find_workload("paper-mha16");
  model::PlanOptions by_speed;
  by_speed.split = model::TokenSplit::by_speed;
  const model::DecodePlan plan = decode.plan(DecodeAlgorithm::tree, w, 1000000, by_speed);
  long long total = 0;
  for (const model::Shard& s : plan.shards) total += s.count;
  CHECK(total == 1000000);
  CHECK(plan.shards[0].count < plan.shards[64].count);
  const auto attend_s = [&](const model::DecodeResult& r) { return r.phases.front().time_s; };
  const double equal_attend = attend_s(decode.evaluate(decode.plan(DecodeAlgorithm::tree, w, 1000000)));
  const double balanced_attend = attend_s(decode.evaluate(plan));
  const double launch = decode.rates(0).launch_s;
  CHECK(equal_attend - launch == doctest::Approx(7813 * 8192.0 / (0.8 * 3.35e12)).scale(1e-12).epsilon(0.01));
  CHECK(balanced_attend - launch == doctest::Approx(1e6 * 8192.0 / (64 * 0.8 * 8.15e12)).scale(1e-12).epsilon(0.01));
  // The ring is transfer-bound: each round lasts as long as its largest block takes through a 46 GB/s NIC, and
  // every round carries an H200's block. Balanced, those hold 1M x 4.8 / 8.15 / 64 = 9,202 tokens against 7,813:
  // the ring gets 9,202 / 7,813 = 1.18 times slower. Splitting by speed is for tree, not for the ring.
  const double ring_equal = decode.predict(DecodeAlgorithm::ring, w, 1000000).latency_s;
  const double ring_balanced = decode.predict(DecodeAlgorithm::ring, w, 1000000, by_speed).latency_s;
  CHECK(ring_balanced / ring_equal == doctest::Approx(9202.0 / 7813).scale(1e-12).epsilon(0.01));
}

TEST_CASE("the ring's evaluation for any split equals the fast path on the equal split, and the replay") {
  // Given the equal split's counts explicitly in another order, the general path runs: rotate them.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel decode(topology);
  const model::Workload& w = model::find_workload("paper-mha16");
  model::PlanOptions given;
  given.shard_tokens.assign(16, 62500);  // 1M / 16: equal, but given
  given.shard_tokens[0] = 62499;
  given.shard_tokens[15] = 62501;  // not split_tokens's order: the general path
  const double general = decode.predict(DecodeAlgorithm::ring, w, 1000000, given).latency_s;
  model::PlanOptions near;
  near.shard_tokens.assign(16, 62500);  // exactly the equal split: the fast path
  const double fast = decode.predict(DecodeAlgorithm::ring, w, 1000000, near).latency_s;
  CHECK(general == doctest::Approx(fast).scale(1e-12).epsilon(1e-4));  // one token more or less on a block of 62,500
  CHECK_THROWS_AS(decode.plan(DecodeAlgorithm::ring, w, 999999, near), std::invalid_argument);  // counts must add up
}
