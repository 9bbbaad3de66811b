// An MoE layer run for real over ranks with expert parallelism (`treering-realrun moe --backend cpu`): every rank
// routes its own tokens (top-k of a router, group-limited as DeepSeek-V3's), dispatches each (token, expert) copy
// to the rank holding the expert, the experts run on what they received, and the combine brings each output back
// to its token's rank, which sums them with the routing weights and adds the shared experts. Checked against a
// one-rank reference of the same layer. Float32 on the CPU; weights and inputs made up from a seed, the same on
// every rank (any rank can make any expert's weights).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "treering/model/workload.hpp"
#include "treering/realrun/transport.hpp"

namespace treering::realrun {

struct MoeShape {
  int hidden = 0;
  int intermediate = 0;  // one expert's width
  int experts = 0;       // routed
  int top_k = 0;
  int groups = 0;            // n_group (0 or 1: plain top-k)
  int groups_per_token = 0;  // topk_group
  int shared_experts = 0;
};

// The workload's routing (experts, top-k, groups, shared experts) at its own width, or at `hidden` and
// `intermediate` when given (a CPU cannot hold deepseek-v3's experts). Throws topologies::InputError for a
// workload without routed experts, sizes below 1, or weights over 2 GiB.
MoeShape moe_shape(const model::Workload& workload, std::optional<int> hidden, std::optional<int> intermediate);

// One expert's gated MLP: down x (SiLU(gate x) * (up x)); gate and up are intermediate x hidden, down hidden x
// intermediate, row-major.
struct ExpertWeights {
  std::vector<float> gate, up, down;
};
// Routed expert e (0 .. experts-1) or shared expert s as -1 - s, from the seed.
ExpertWeights expert_weights(const MoeShape& shape, int expert, std::uint64_t seed);
std::vector<float> expert_forward(const MoeShape& shape, const ExpertWeights& weights, const float* x);

// A token's experts (top_k of them, best first) and their weights (normalised to 1).
struct Routing {
  std::vector<int> experts;
  std::vector<float> weights;
};
// From its experts' scores (sigmoid of the router's logits): with groups, a group's score is the sum of its two
// best experts' and the token keeps the groups_per_token best groups; then the top_k experts among those groups.
// Ties go to the lower index.
Routing route(const MoeShape& shape, const std::vector<float>& scores);
// The router's scores for one token: sigmoid(router x hidden state), the router made up from the seed.
std::vector<float> router_scores(const MoeShape& shape, const float* x, std::uint64_t seed);

// Rank `rank`'s hidden states (tokens x hidden) from the seed.
std::vector<float> token_states(const MoeShape& shape, int rank, int tokens, std::uint64_t seed);

// The shared experts' weights, and a token's output: its routed experts' outputs (in slot order) weighted by its
// routing, plus its shared experts' (summed in that order everywhere, so a run and its reference agree to the bit).
std::vector<ExpertWeights> shared_weights(const MoeShape& shape, std::uint64_t seed);
std::vector<float> combine_token(const MoeShape& shape, const Routing& routing,
                                 const std::vector<std::vector<float>>& slot_outputs, const float* x,
                                 const std::vector<ExpertWeights>& shared);
// max |got - want| / max |want| (the absolute error where want is all zeros).
double moe_relative_error(const std::vector<float>& got, const std::vector<float>& want);

// The layer on one rank for `tokens` states: every routed expert a token picks and the shared experts, summed.
std::vector<float> reference_layer(const MoeShape& shape, const std::vector<float>& states, int tokens,
                                   std::uint64_t seed);

struct MoeRankResult {
  int tokens = 0;
  long long copies_sent = 0;               // (token, expert) copies dispatched, to itself included
  double destination_ranks_per_token = 0;  // mean distinct ranks a token reaches
  double dispatch_bytes = 0;               // sent to other ranks: float32 values and a 4-byte expert id a copy
  double combine_bytes = 0;                // expert outputs sent back to other ranks
  double dispatch_s = 0, experts_s = 0, combine_s = 0;
  double max_relative_error = 0;  // against reference_layer on this rank's tokens
};

// Runs the layer over transport's ranks (experts split evenly, contiguously). Throws topologies::InputError when
// the ranks do not split the experts.
MoeRankResult run_moe_layer(Transport& transport, const MoeShape& shape, int tokens_per_rank, std::uint64_t seed);

}  // namespace treering::realrun
