// Expert routing under EP: destinations per token for uniform and group-limited top-k at EP 8, 16, 64, and the
// most-loaded GPU. Expected values by hand (the binomial ratios evaluated with Python's math.comb, as noted).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "treering/model/expert_routing.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering::model;

namespace {

Workload uniform_v3() {  // deepseek-v3's 256 experts, top-8, without its groups
  Workload w = find_workload("deepseek-v3");
  w.expert_groups = w.expert_groups_per_token = 0;
  return w;
}

ExpertRouting route(const Workload& w, int ep, int tokens = 128, int per_node = 8) {
  return expert_routing(w, ExpertPlacement{ep, std::min(ep, per_node)}, tokens);
}

}  // namespace

TEST_CASE("uniform top-8 of 256: a GPU of u experts is missed with C(256 - u, 8) / C(256, 8)") {
  const Workload w = uniform_v3();
  // EP 8 (one node): u = 32, C(224, 8) / C(256, 8) = 0.33817 -> 8 x 0.66183 = 5.2947 GPUs, 1 node.
  const ExpertRouting ep8 = route(w, 8);
  CHECK(ep8.gpus_per_token == doctest::Approx(5.294652).epsilon(1e-6).scale(1e-12));
  CHECK(ep8.nodes_per_token == doctest::Approx(1.0).scale(1e-12));
  CHECK(ep8.copies_per_token == 8);
  // EP 16 (2 nodes): u = 16: 16 x (1 - C(240, 8) / C(256, 8)) = 6.52328; a node of 128: 2 x (1 - C(128, 8) /
  // C(256, 8)) = 1.99302.
  const ExpertRouting ep16 = route(w, 16);
  CHECK(ep16.gpus_per_token == doctest::Approx(6.523280).epsilon(1e-6).scale(1e-12));
  CHECK(ep16.nodes_per_token == doctest::Approx(1.993020).epsilon(1e-6).scale(1e-12));
  // EP 64 (8 nodes): u = 4: 64 x (1 - C(252, 8) / C(256, 8)) = 7.67575; a node of 32 as EP 8's GPU: 5.29465.
  const ExpertRouting ep64 = route(w, 64);
  CHECK(ep64.gpus_per_token == doctest::Approx(7.675750).epsilon(1e-6).scale(1e-12));
  CHECK(ep64.nodes_per_token == doctest::Approx(5.294652).epsilon(1e-6).scale(1e-12));
  CHECK_FALSE(ep64.group_limited);
}

TEST_CASE("group-limited routing (8 groups, top 4): a token reaches at most 4 groups' GPUs and nodes") {
  const Workload w = find_workload("deepseek-v3");
  // T = 4 x 32 = 128 experts in a token's groups. EP 8: a GPU is one group: 1/2 + 1/2 x C(96, 8) / C(128, 8)
  // = 0.5 + 0.5 x 0.092747 -> 8 x 0.453626 = 3.62901 GPUs.
  const ExpertRouting ep8 = route(w, 8);
  CHECK(ep8.group_limited);
  CHECK(ep8.gpus_per_token == doctest::Approx(3.629011).epsilon(1e-6).scale(1e-12));
  CHECK(ep8.gpus_per_token <= 4);
  // EP 16: a GPU holds 16 of a group: 16 x 0.5 x (1 - C(112, 8) / C(128, 8)) = 5.33936; a node holds 4 groups:
  // j of them picked with C(4, j) C(4, 4 - j) / C(8, 4) = 1, 16, 36, 16, 1 (/ 70), missed with C(128 - 32 j, 8) /
  // C(128, 8): 2 x (1 - 0.037079) = 1.92584 nodes.
  const ExpertRouting ep16 = route(w, 16);
  CHECK(ep16.gpus_per_token == doctest::Approx(5.339357).epsilon(1e-6).scale(1e-12));
  CHECK(ep16.nodes_per_token == doctest::Approx(1.925842).epsilon(1e-6).scale(1e-12));
  // EP 64: a GPU holds 4: 64 x 0.5 x (1 - C(124, 8) / C(128, 8)) = 7.35937; a node one group: 3.62901 nodes.
  const ExpertRouting ep64 = route(w, 64);
  CHECK(ep64.gpus_per_token == doctest::Approx(7.359370).epsilon(1e-6).scale(1e-12));
  CHECK(ep64.nodes_per_token == doctest::Approx(3.629011).epsilon(1e-6).scale(1e-12));
  CHECK(ep64.nodes_per_token < route(uniform_v3(), 64).nodes_per_token);
}

TEST_CASE("the most-loaded GPU: 2 GPUs of one expert each, 1 token each, top-1") {
  Workload w;
  w.name = "two-experts";
  w.experts = 2;
  w.experts_per_token = 1;
  // n = 2 tokens, each reaches a GPU with p = 1/2: F(0) = 1/4, F(1) = 3/4, E[max] = (1 - 1/16) + (1 - 9/16) =
  // 1.375 tokens (independent GPUs; the exact maximum of (X, 2 - X) is 1.5); one copy per arrival.
  const ExpertRouting r = expert_routing(w, ExpertPlacement{2, 2}, 1);
  CHECK(r.busiest_tokens_received == doctest::Approx(1.375).scale(1e-12));
  CHECK(r.busiest_copies_received == doctest::Approx(1.375).scale(1e-12));
  CHECK(r.busiest_factor == doctest::Approx(1.375).scale(1e-12));
  CHECK(expected_binomial_maximum(2, 0.5, 2) == doctest::Approx(1.375).scale(1e-12));
  CHECK(expected_binomial_maximum(5, 1.0, 3) == doctest::Approx(5.0).scale(1e-12));
  CHECK(expected_binomial_maximum(5, 0.0, 3) == doctest::Approx(0.0).scale(1e-12));
}

TEST_CASE("the most-loaded GPU at deepseek-v3's EP 64 x 128 tokens agrees with a sampled routing") {
  const Workload w = find_workload("deepseek-v3");
  const ExpertRouting r = route(w, 64);
  // Sample the group-limited routing itself: 4 of 8 groups, then 8 of their 128 experts; GPU = expert / 4.
  std::mt19937_64 random(2026);
  std::vector<int> groups(8), experts(128);
  double sum_of_maxima = 0;
  const int trials = 60;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<int> copies(64, 0);
    for (int token = 0; token < 64 * 128; ++token) {
      for (int g = 0; g < 8; ++g) groups[static_cast<size_t>(g)] = g;
      std::shuffle(groups.begin(), groups.end(), random);
      for (int e = 0; e < 128; ++e) experts[static_cast<size_t>(e)] = groups[static_cast<size_t>(e / 32)] * 32 + e % 32;
      for (int pick = 0; pick < 8; ++pick) {  // partial Fisher-Yates: 8 distinct of the 128
        std::uniform_int_distribution<int> next(pick, 127);
        std::swap(experts[static_cast<size_t>(pick)], experts[static_cast<size_t>(next(random))]);
        ++copies[static_cast<size_t>(experts[static_cast<size_t>(pick)] / 4)];
      }
    }
    sum_of_maxima += *std::max_element(copies.begin(), copies.end());
  }
  // the mean is 128 x 8 = 1,024 copies a GPU; the busiest draws a few per cent more
  CHECK(r.mean_copies_received == doctest::Approx(1024).scale(1e-12));
  CHECK(r.busiest_copies_received == doctest::Approx(sum_of_maxima / trials).epsilon(0.03).scale(1e-12));
  CHECK(r.busiest_factor > 1.0);
}

TEST_CASE("skew and redundant experts: the hottest expert's GPU draws 1 + (skew - 1) / u of the mean") {
  const Workload w = find_workload("deepseek-v3");
  const ExpertRouting even = route(w, 64);
  // u = 4 experts a GPU; skew 3: 1 + 2 / 4 = 1.5; a replica of the hottest halves it to 1.5: 1 + 0.5 / 4 = 1.125.
  const ExpertRouting skewed = expert_routing(w, ExpertPlacement{64, 8, 0, 3.0}, 128);
  CHECK(skewed.busiest_copies_received == doctest::Approx(even.busiest_copies_received * 1.5).scale(1e-12));
  const ExpertRouting replicated = expert_routing(w, ExpertPlacement{64, 8, 64, 3.0}, 128);
  CHECK(replicated.busiest_copies_received == doctest::Approx(even.busiest_copies_received * 1.125).scale(1e-12));
  CHECK(replicated.experts_per_gpu == doctest::Approx(5.0).scale(1e-12));  // (256 + 64) / 64
}

TEST_CASE("expert routing refuses what cannot be placed") {
  const Workload w = find_workload("deepseek-v3");
  using treering::topologies::InputError;
  CHECK_THROWS_AS(expert_routing(find_workload("llama3.1-8b"), ExpertPlacement{8, 8}, 1), InputError);
  CHECK_THROWS_WITH_AS(expert_routing(w, ExpertPlacement{144, 8}, 1), doctest::Contains("split evenly"), InputError);
  CHECK_THROWS_AS(expert_routing(w, ExpertPlacement{12, 8}, 1), InputError);  // 1.5 nodes
  CHECK_THROWS_AS(expert_routing(w, ExpertPlacement{0, 1}, 1), InputError);
  CHECK_THROWS_AS(expert_routing(w, ExpertPlacement{8, 8, 0, 0.5}, 1), InputError);
  CHECK_THROWS_AS(expert_routing(w, ExpertPlacement{8, 8}, -1), InputError);
  // EP 144 with 32 redundant experts: 288 / 144 = 2 a GPU (DeepSeek's decode)
  CHECK(expert_routing(w, ExpertPlacement{144, 8, 32}, 1).experts_per_gpu == doctest::Approx(2.0).scale(1e-12));
}
