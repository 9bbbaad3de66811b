// Decode plans: shards, phases per algorithm, tree-lse's tree.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/model/decode.hpp"
#include "treering/model/plan.hpp"
#include "treering/topologies/load.hpp"

using namespace treering::model;
namespace topologies = treering::topologies;

TEST_CASE("shards: N over p, the first N mod p one token longer, empty past N") {
  auto uneven = split_tokens(17, 4);  // 17 = 4 x 4 + 1: 5 4 4 4
  REQUIRE(uneven.size() == 4);
  CHECK(uneven[0].count == 5);
  CHECK(uneven[1].count == 4);
  CHECK(uneven[1].first == 5);
  CHECK(uneven[3].first == 13);
  auto sparse = split_tokens(3, 8);  // 3 GPUs hold a token, 5 hold none
  CHECK(sparse[2].count == 1);
  CHECK(sparse[3].count == 0);
  CHECK(sparse[7].count == 0);
  CHECK_THROWS_AS(split_tokens(10, 0), std::invalid_argument);
}

TEST_CASE("sizes of paper-mha16: q 4 KiB, K and V 8 KiB per token, fp32 statistics") {
  PlanSizes sizes = plan_sizes(find_workload("paper-mha16"), 4);
  CHECK(sizes.q_bytes == 4096);             // 16 x 128 x 2 B
  CHECK(sizes.kv_bytes_per_token == 8192);  // 2 x 16 x 128 x 2 B
  CHECK(sizes.stats_bytes == 64);           // 16 x 4 B
  CHECK(sizes.state_bytes == 4160);
  // GQA: llama3.1-8b keeps 8 KV heads for 32 query heads: 2 x 8 x 128 x 2 B = 4 KiB per token and layer.
  CHECK(plan_sizes(find_workload("llama3.1-8b"), 4).kv_bytes_per_token == 4096);
}

TEST_CASE("the tree plan is the paper's: attend, all-reduce max, sum numerators, sum denominators") {
  DecodePlan plan = make_plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 1000, {0, 1, 2, 3}, {0, 0, 0, 0});
  std::vector<double> collective_bytes;
  for (const Phase& phase : plan.phases) {
    if (phase.kind == PhaseKind::collective) collective_bytes.push_back(phase.bytes);
  }
  CHECK(collective_bytes == std::vector<double>{64, 4096, 64});
  DecodePlan fused = make_plan(DecodeAlgorithm::tree_fused, find_workload("paper-mha16"), 1000, {0, 1}, {0, 0});
  int collectives = 0;
  for (const Phase& phase : fused.phases) collectives += phase.kind == PhaseKind::collective;
  CHECK(collectives == 2);  // max, then [numerator | denominator] = 4096 + 64 bytes
}

TEST_CASE("tree-lse: flat inside domains, binomial across, then the same edges back") {
  // 8 ranks in 2 domains of 4: 1 -> 0, 2 -> 0, 3 -> 0 and 5 -> 4, 6 -> 4, 7 -> 4; then 4 -> 0; then back.
  DecodePlan plan = make_plan(DecodeAlgorithm::tree_lse, find_workload("paper-mha16"), 1000, {0, 1, 2, 3, 4, 5, 6, 7},
                              {0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(plan.phases.size() == 5);  // attend, 2 reduce levels, 2 broadcast levels
  const Phase& inside = plan.phases[1];
  CHECK(inside.sends.size() == 6);
  CHECK(inside.merge_states == 4);  // its own state and three received
  CHECK(inside.sends[0].bytes == 4160);
  const Phase& across = plan.phases[2];
  REQUIRE(across.sends.size() == 1);
  CHECK(across.sends[0].from == 4);
  CHECK(across.sends[0].to == 0);
  const Phase& down = plan.phases[3];
  CHECK(down.sends[0].from == 0);
  CHECK(down.sends[0].to == 4);
  CHECK(down.sends[0].bytes == 4096);  // only o travels back
  CHECK(plan.phases[4].sends.size() == 6);
}

TEST_CASE("bad plan requests") {
  CHECK_THROWS_AS(make_plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 0, {0}, {0}), std::invalid_argument);
  CHECK_THROWS_AS(make_plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 10, {}, {}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_decode_algorithm("star"),
                       "unknown algorithm 'star' (expected one of: ring, tree, tree-fused, tree-lse, allgather-merge, "
                       "pass-q, a2a, ag-rs)",
                       std::invalid_argument);
}

TEST_CASE("steps_of: every GPU's own sequence, consistent with the plan") {
  // Ring over 4 ranks, 17 tokens (shards 5 4 4 4): rank 0 sends blocks 0, 3, 2 (5 + 4 + 4 tokens) to rank 1
  // and receives blocks 3, 2, 1 from rank 3; it attends 4 times.
  DecodePlan ring = make_plan(DecodeAlgorithm::ring, find_workload("paper-mha16"), 17, {0, 1, 2, 3}, {0, 0, 0, 0});
  double sent = 0, received = 0;
  int attends = 0;
  for (const Step& step : steps_of(ring, 0)) {
    if (step.kind == StepKind::send) {
      CHECK(step.peer == 1);
      CHECK(step.overlaps_next);
      sent += step.bytes;
    }
    if (step.kind == StepKind::receive) {
      CHECK(step.peer == 3);
      received += step.bytes;
    }
    attends += step.kind == StepKind::compute && step.flops > 0;
  }
  CHECK(sent == 13 * 8192.0);
  CHECK(received == 12 * 8192.0);
  CHECK(attends == 4);
  // tree-lse, 8 ranks in 2 domains: rank 4 receives 3 states inside its domain, merges, sends to rank 0,
  // then gets o back and forwards it to 5, 6, 7.
  DecodePlan lse = make_plan(DecodeAlgorithm::tree_lse, find_workload("paper-mha16"), 1000, {0, 1, 2, 3, 4, 5, 6, 7},
                             {0, 0, 0, 0, 1, 1, 1, 1});
  std::vector<int> sends_to;
  int receives = 0;
  for (const Step& step : steps_of(lse, 4)) {
    if (step.kind == StepKind::send) sends_to.push_back(step.peer);
    receives += step.kind == StepKind::receive;
  }
  CHECK(sends_to == std::vector<int>{0, 5, 6, 7});
  CHECK(receives == 4);  // 5, 6, 7 up; 0 down
  CHECK_THROWS_AS(steps_of(lse, 8), std::logic_error);
}

TEST_CASE("plan options: fp32 partial outputs and a forced collective algorithm") {
  // paper-mha16, batch 1: o is 16 x 128 values; in fp32 that is 8 KiB, the numerators' all-reduce too.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const DecodeModel model(topology);
  PlanOptions options;
  options.partial_o_bytes = 4;
  options.collective_algorithm = CollectiveAlgorithm::ring;
  const DecodePlan plan = model.plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 8000, options);
  CHECK(plan.sizes.o_bytes == 16 * 128 * 4);
  CHECK(plan.sizes.q_bytes == 16 * 128 * 2);  // q keeps the workload's dtype
  CHECK(plan.phases.at(3).bytes == 16 * 128 * 4);
  for (const Phase& phase : plan.phases) {
    if (phase.kind != PhaseKind::collective) continue;
    CHECK(phase.algorithm == CollectiveAlgorithm::ring);
    CHECK(model.collective(phase).chosen.algorithm == CollectiveAlgorithm::ring);
  }
  // Ring all-reduces on 8 GPUs: each sends 2 x 7/8 of each buffer: (64 + 8192 + 64) x 7/4 per GPU.
  const DecodeResult result = model.evaluate(plan);
  CHECK(result.volume.total == doctest::Approx(8 * (64 + 8192 + 64) * 7.0 / 4).scale(1e-12));
  PlanOptions bad;
  bad.stats_bytes = 0;
  CHECK_THROWS_AS(model.plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 8000, bad), std::invalid_argument);
}

TEST_CASE("bytes each rank sends, exactly, when collectives run as rings") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const DecodeModel model(topology, {0, 1, 2});
  PlanOptions options;
  options.partial_o_bytes = 4;
  options.collective_algorithm = CollectiveAlgorithm::ring;
  // tree, paper-mha16 batch 1 on 3 ranks: lse all-reduces of 16 fp32 values (chunks 6, 5, 5: ranks send 22, 21,
  // 21 values each time, see plan.hpp), and numerators of 2048 values (chunks 683, 683, 682: rank 0 sends
  // 683+682+683+683 = 2731, rank 1: 683+683+682+683 = 2731, rank 2: 682+683+683+682 = 2730).
  const DecodePlan tree = model.plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 1000, options);
  const std::vector<double> sent = bytes_sent_per_rank(tree);
  CHECK(sent[0] == (22 + 2731 + 22) * 4.0);
  CHECK(sent[1] == (21 + 2731 + 21) * 4.0);
  CHECK(sent[2] == (21 + 2730 + 21) * 4.0);
  CHECK(sent[0] + sent[1] + sent[2] == doctest::Approx(model.evaluate(tree).volume.total).scale(1e-12));
  // ring, 1000 tokens over 3 (334, 333, 333), 8 KiB a token: rank r sends every block but rank r+1's.
  const DecodePlan ring = model.plan(DecodeAlgorithm::ring, find_workload("paper-mha16"), 1000, options);
  CHECK(bytes_sent_per_rank(ring)[0] == (1000 - 333) * 8192.0);
  CHECK(bytes_sent_per_rank(ring)[2] == (1000 - 334) * 8192.0);
  // Without forcing rings the per-rank bytes are not known.
  CHECK_THROWS_AS(bytes_sent_per_rank(model.plan(DecodeAlgorithm::tree, find_workload("paper-mha16"), 1000)),
                  std::invalid_argument);
}

TEST_CASE("one GPU holds the whole context: every algorithm's plan is its attention alone (cp 1 combines nothing)") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const DecodeModel one(topology, {0});
  const Workload& workload = find_workload("llama3.1-8b");
  const double tree_lse = one.predict(DecodeAlgorithm::tree_lse, workload, 128000).latency_s;
  for (DecodeAlgorithm algorithm :
       {DecodeAlgorithm::ring, DecodeAlgorithm::tree, DecodeAlgorithm::tree_fused, DecodeAlgorithm::tree_lse,
        DecodeAlgorithm::allgather_merge, DecodeAlgorithm::pass_q, DecodeAlgorithm::a2a, DecodeAlgorithm::ag_rs}) {
    CAPTURE(to_string(algorithm));
    const DecodePlan plan = one.plan(algorithm, workload, 128000);
    REQUIRE(plan.phases.size() == 1);
    CHECK(plan.phases[0].kind == PhaseKind::attend);
    const DecodeResult result = one.evaluate(plan);
    CHECK(result.volume.total == 0);
    CHECK(result.latency_s == tree_lse);  // the same single kernel, whatever the algorithm's name
  }
}
