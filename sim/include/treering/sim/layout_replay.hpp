// Replaying a whole TP x CP layout (model/layout.hpp) at once: every CP group's combine on its heads, side by
// side, their transfers sharing NICs, leaf uplinks and spines; with a layer or a step (model/step.hpp), every TP
// group's all-reduces after them, on the same links.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/model/layout_model.hpp"
#include "treering/model/step.hpp"
#include "treering/sim/collective_replay.hpp"
#include "treering/sim/replay.hpp"

namespace treering::sim {

// A layer or a step as the simulator replays it around the attention: every GPU, once its CP group's combine
// is over, runs its post-attention group's plan (stage 1): the projections (the model's time), the all-reduce of
// the hidden state, the MLP, the second all-reduce, the norms; and for a step (stage 2) the LM head and the
// all-gather of the logits. The parts' times are the step model's (`step`), the collectives are replayed.
struct LayoutReplay {
  std::vector<model::DecodePlan> plans;         // per group replayed: the CP groups' plans, then the post-attention
                                                // groups' (one per stage after the attention)
  std::vector<model::DecodeModel> post_models;  // the post-attention groups' models
  std::vector<GroupPlan> groups;                // what was replayed, in order (for traces)
  ReplayResult replay;
  int cp_groups = 0;                            // plans[0 .. cp_groups) are the CP groups'
  int slowest_group = 0;                        // the CP group (TP slice) whose combine ended last
  double attention_s = 0;                       // when the last CP group's combine ended
  std::optional<double> layer_s;                // scope layer|step: when the last GPU ended the layer
  std::optional<double> step_s;                 // scope step: layers x the layer + the LM head and its all-gather
  std::optional<SimulatedCollective> dispatch;  // expert parallelism: an MoE layer's exchanges (a micro-batch's),
  std::optional<SimulatedCollective> combine;   //   all EP ranks at once on their routes (moe_replay.hpp)
  double tp_communication_s = 0;                // the layer's time beyond the combine and the parts' fixed times
                                                // (the TP all-reduces, and waiting for the slowest CP group); a
                                                // step: every layer's, and the logits' all-gather
};

// `step`: the step model's result for the same case (scope layer or step; none for the attention alone).
// Throws as replay_groups.
LayoutReplay replay_layout(const model::LayoutModel& layouts, model::DecodeAlgorithm algorithm,
                           const model::Workload& workload, long long seq_len, const model::PlanOptions& options,
                           const std::optional<model::StepResult>& step, const ReplayOptions& replay);

// A link's load in a replay: its bytes, and its utilisation: bytes / (its rate, as the simulator's links carry it,
// x the replay's latency). Example: 300 MB over a 400 GB/s link at efficiency 0.75 in 2 ms: 300e6 / (300e9 x
// 2e-3) = 0.5.
struct LinkLoad {
  topologies::LinkId link = 0;
  double bytes = 0;
  double utilisation = 0;
};
// Every link the replay loaded, in link order.
std::vector<LinkLoad> link_loads(const topologies::Topology& topology, const ReplayResult& replay);
// The `count` links the replay loaded most, busiest first (ties: the lower link id first).
std::vector<LinkLoad> busiest_links(const topologies::Topology& topology, const ReplayResult& replay, size_t count);

}  // namespace treering::sim
