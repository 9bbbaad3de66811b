// transfers_phase_steps: every rank's steps of a transfers phase in one pass, as append_phase_steps gives them
// one rank at a time.
#include <doctest/doctest.h>

#include <vector>

#include "treering/model/plan.hpp"

using namespace treering::model;

namespace {

bool same_step(const Step& a, const Step& b) {
  return a.kind == b.kind && a.label == b.label && a.peer == b.peer && a.bytes == b.bytes && a.flops == b.flops &&
         a.phase == b.phase && a.kernels == b.kernels && a.fixed_s == b.fixed_s && a.attention == b.attention;
}

}  // namespace

TEST_CASE("transfers_phase_steps: tree-lse over 2 domains of 4, by hand") {
  // Phase 0 gathers inside each domain: ranks 1-3 send their state to 0, ranks 5-7 to 4; 0 and 4 receive 3
  // states each (in the order of the phase's sends) and merge them with their own.
  const DecodePlan lse = make_plan(DecodeAlgorithm::tree_lse, find_workload("paper-mha16"), 1000,
                                   {0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(lse.phases.at(1).kind == PhaseKind::transfers);
  const std::vector<std::vector<Step>> steps = transfers_phase_steps(lse, 1);
  REQUIRE(steps.size() == 8);
  REQUIRE(steps[4].size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(steps[4][static_cast<size_t>(i)].kind == StepKind::receive);
    CHECK(steps[4][static_cast<size_t>(i)].peer == 5 + i);
    CHECK(steps[4][static_cast<size_t>(i)].phase == 1);
  }
  CHECK(steps[4][3].kind == StepKind::compute);  // the merge
  REQUIRE(steps[6].size() == 1);
  CHECK(steps[6][0].kind == StepKind::send);
  CHECK(steps[6][0].peer == 4);
  CHECK_THROWS_AS(transfers_phase_steps(lse, 0), std::logic_error);  // the attention: not a transfers phase
}

TEST_CASE("transfers_phase_steps equals append_phase_steps rank by rank, for every plan with transfers") {
  const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const std::vector<int> domains{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  Workload batched = find_workload("paper-mha16");
  batched.batch = 5;
  int phases_checked = 0;
  for (DecodeAlgorithm algorithm : all_decode_algorithms()) {
    const DecodePlan plan = make_plan(algorithm, batched, 100'003, gpus, domains);
    for (size_t phase = 0; phase < plan.phases.size(); ++phase) {
      if (plan.phases[phase].kind != PhaseKind::transfers) continue;
      ++phases_checked;
      const std::vector<std::vector<Step>> all = transfers_phase_steps(plan, phase);
      for (int rank = 0; rank < static_cast<int>(gpus.size()); ++rank) {
        std::vector<Step> one;
        append_phase_steps(plan, rank, phase, one);
        CAPTURE(to_string(algorithm));
        CAPTURE(phase);
        CAPTURE(rank);
        const std::vector<Step>& got = all[static_cast<size_t>(rank)];
        REQUIRE(got.size() == one.size());
        for (size_t i = 0; i < one.size(); ++i) CHECK(same_step(got[i], one[i]));
      }
    }
  }
  CHECK(phases_checked >= 4);  // tree-lse's up and down, allgather-merge's, pass-q's and a2a's all-to-alls
}
