// The combines production engines deploy, run for real by the cpu backend (decode_run.cpp calls them): pass-q,
// a2a and ag-rs (model/plan.hpp). Private to realrun.
#pragma once

#include <cstdint>
#include <functional>
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

// The phases of pass-q, a2a and ag-rs, each run by decode_run.cpp when it meets a phase of that role; `phase` is
// the phase's index in the plan (its sizes are checked against the plan's; its messages tagged index + 1, as
// decode_run.cpp tags them). keep_held then leaves the rank's part of the output (model::output_held) in o, the
// rest zero.
void run_q_ring(RankView& view, const PassQInputs& inputs, size_t phase);   // q_ring
void exchange_with_sequence_owners(RankView& view, size_t phase);           // states_to_sequence_owners
void exchange_with_head_owners(RankView& view, size_t phase);               // states_to_head_owners
std::vector<float> gather_lse(RankView& view, size_t phase);                // lse_gather: every rank's lse
void rescale_to_global(RankView& view, const std::vector<float>& all_lse);  // rescale_to_global
void reduce_scatter_o(RankView& view, size_t phase);                        // rescaled_reduce_scatter
void keep_held(const RankView& view);

// A rank's own attention over its shard in place of the plan's (MLA's absorbed kernel over the latent, mla_run.cpp):
// fills o ([b][n_h][d], d the plan workload's head_dim) and lse, sending through the link what it needs to. The
// plan's other phases run around it as for any workload.
using OwnAttention = std::function<void(CountingLink& link, std::vector<float>& o, std::vector<float>& lse)>;

// run_plan (decode_run.hpp) with `own` attention, or the plan's (own null). Throws topologies::InputError for own
// attention in a plan that passes K/V or queries (ring, pass-q).
RankResult run_plan_with(const model::DecodePlan& plan, Transport& transport, std::uint64_t seed, RingBuffers* buffers,
                         const OwnAttention* own);

}  // namespace treering::realrun::detail
