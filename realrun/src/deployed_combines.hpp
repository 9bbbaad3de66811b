// The combines production engines deploy, run for real by the cpu backend (decode_run.cpp calls them): pass-q,
// a2a and ag-rs (model/plan.hpp). Private to realrun.
#pragma once

#include <cstdint>
#include <vector>

#include "ring_collectives.hpp"
#include "treering/model/plan.hpp"
#include "treering/realrun/attention.hpp"
#include "treering/realrun/decode_run.hpp"

namespace treering::realrun::detail {

// One rank's view of a run: its inputs, its state (o [b][n_h][d], lse [b][n_h], fp32) and its link.
struct RankView {
  const model::DecodePlan& plan;
  CountingLink& link;
  AttentionShape shape;
  Dtype dtype;
  int rank = 0, ranks = 1;
  const Inputs& mine;
  std::vector<float>& o;
  std::vector<float>& lse;
};

// pass-q's inputs, laid out before the clock: for each owner, its sequences' K and V of this rank's shard
// ([token][its sequences][n_kv][d]) and its sequences' q.
struct PassQInputs {
  std::vector<std::vector<std::uint16_t>> q, k, v;  // per owner
};
PassQInputs pass_q_inputs(const RankView& view);

// Each leaves the rank's part of the output (model::output_held) in o, the rest zero. Phase tags: the phase's
// index + 1, as decode_run.cpp tags them.
void run_pass_q(RankView& view, const PassQInputs& inputs);
void run_a2a(RankView& view);   // after the rank's attention over its shard
void run_ag_rs(RankView& view); // after the rank's attention over its shard

}  // namespace treering::realrun::detail
