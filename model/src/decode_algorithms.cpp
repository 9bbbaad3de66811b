// The decode algorithms' table (decode_algorithms.hpp): each algorithm's combine as phases, its buffers, its facts.
#include "treering/model/decode_algorithms.hpp"

#include "decode_algorithm_phases.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace treering::model {
namespace {

using detail::attention_phase;

Phase collective(PhaseRole role, const std::string& label, CollectiveOp op, double bytes, int element_bytes) {
  return {.kind = PhaseKind::collective,
          .role = role,
          .label = label,
          .op = op,
          .bytes = bytes,
          .element_bytes = element_bytes};
}

Phase elementwise(PhaseRole role, const std::string& label, double bytes) {
  return {.kind = PhaseKind::elementwise, .role = role, .label = label, .bytes = bytes};
}

// ring: pass-KV, the paper's baseline. Its output is normalised as it goes (each round merges into (o, lse)).
std::vector<Phase> ring_phases(const PhaseInputs& in) {
  return {{.kind = PhaseKind::ring_pass,
           .role = PhaseRole::kv_ring,
           .label = "pass K/V blocks around the ring, attending to each"},
          elementwise(PhaseRole::normalise, "normalise o", in.sizes.o_bytes)};
}

// tree: the paper's Algorithm 3, three all-reduces (max of lse, sums of numerators and of denominators).
std::vector<Phase> tree_phases(const PhaseInputs& in) {
  const PlanSizes& s = in.sizes;
  return {attention_phase(),
          collective(PhaseRole::lse_max, "all-reduce max of lse", CollectiveOp::allreduce, s.stats_bytes,
                     in.stats_element_bytes),
          elementwise(PhaseRole::rescale, "numerator o*exp(lse-m), denominator exp(lse-m)", s.state_bytes),
          collective(PhaseRole::numerator_sum, "all-reduce sum of numerators", CollectiveOp::allreduce, s.o_bytes,
                     in.o_element_bytes),
          collective(PhaseRole::denominator_sum, "all-reduce sum of denominators", CollectiveOp::allreduce,
                     s.stats_bytes, in.stats_element_bytes),
          elementwise(PhaseRole::divide, "divide", s.o_bytes)};
}

// tree-fused: the two sums in one all-reduce over [numerator | denominator] (mixed element sizes: 0).
std::vector<Phase> tree_fused_phases(const PhaseInputs& in) {
  const PlanSizes& s = in.sizes;
  const int element_bytes = in.o_element_bytes == in.stats_element_bytes ? in.stats_element_bytes : 0;
  return {attention_phase(),
          collective(PhaseRole::lse_max, "all-reduce max of lse", CollectiveOp::allreduce, s.stats_bytes,
                     in.stats_element_bytes),
          elementwise(PhaseRole::rescale, "pack [numerator | denominator]", s.state_bytes),
          collective(PhaseRole::rescaled_sum, "all-reduce sum of [numerator | denominator]", CollectiveOp::allreduce,
                     s.o_bytes + s.stats_bytes, element_bytes),
          elementwise(PhaseRole::divide, "divide", s.o_bytes)};
}

// allgather-merge: every rank gathers all p states and merges them itself.
std::vector<Phase> allgather_merge_phases(const PhaseInputs& in) {
  return {attention_phase(),
          collective(PhaseRole::state_gather, "all-gather (o, lse)", CollectiveOp::allgather,
                     in.ranks * in.sizes.state_bytes, 0),
          {.kind = PhaseKind::merge,
           .role = PhaseRole::merge_gathered,
           .label = "merge p states",
           .merge_states = in.ranks}};
}

// ag-rs: the global lse from all p, each o rescaled by exp(lse - global), summed and scattered.
std::vector<Phase> ag_rs_phases(const PhaseInputs& in) {
  const PlanSizes& s = in.sizes;
  return {attention_phase(),
          collective(PhaseRole::lse_gather, "all-gather lse", CollectiveOp::allgather, in.ranks * s.stats_bytes,
                     in.stats_element_bytes),
          elementwise(PhaseRole::rescale_to_global, "rescale o by exp(lse - global lse)",
                      s.state_bytes + in.ranks * s.stats_bytes),
          collective(PhaseRole::rescaled_reduce_scatter, "reduce-scatter of rescaled o", CollectiveOp::reduce_scatter,
                     s.o_bytes, in.o_element_bytes)};
}

// The ring holds the block it forwards while the next arrives: two foreign blocks in flight with more than 2 GPUs
// (the paper's Mem_ring counts one), one with 2, none alone.
CombineBuffers ring_buffers(const DecodePlan& plan, long long largest) {
  const size_t p = plan.gpus.size();
  const double in_flight = p > 2 ? 2.0 : p == 2 ? 1.0 : 0.0;
  return {0, in_flight * static_cast<double>(largest) * plan.sizes.kv_bytes_per_token};
}

CombineBuffers stats_buffer(const DecodePlan& plan, long long) {
  return {plan.sizes.stats_bytes, 0};
}  // max, then denominators

// Every state a receiver takes in at one transfers phase (the most over the plan's phases).
double incoming_states_bytes(const DecodePlan& plan) {
  double incoming = 0;
  for (const Phase& phase : plan.phases) {
    incoming = std::max(incoming, (phase.merge_states - 1) * phase.merge_fraction);
  }
  return incoming * plan.sizes.state_bytes;
}

CombineBuffers incoming_buffers(const DecodePlan& plan, long long) { return {incoming_states_bytes(plan), 0}; }

// pass-q: a partial state for every sequence and the p - 1 coming back for its own; the query block in flight.
CombineBuffers pass_q_buffers(const DecodePlan& plan, long long) {
  return {plan.sizes.state_bytes + incoming_states_bytes(plan), plan.sizes.q_bytes};
}

CombineBuffers gathered_states(const DecodePlan& plan, long long) {
  return {static_cast<double>(plan.gpus.size()) * plan.sizes.state_bytes, 0};
}

CombineBuffers all_lse_and_rescaled_o(const DecodePlan& plan, long long) {
  return {static_cast<double>(plan.gpus.size()) * plan.sizes.stats_bytes + plan.sizes.o_bytes, 0};
}

using detail::a2a_phases;
using detail::pass_q_phases;
using detail::tree_lse_phases;
using enum DecodeAlgorithm;
constexpr std::array<DecodeAlgorithmInfo, kDecodeAlgorithmCount> kTable{{
    {ring, "ring", true, OutputSplit::replicated, ring_phases, ring_buffers,
     "pass-KV: K/V blocks travel the ring while each rank attends to them (the paper's baseline)"},
    {tree, "tree", true, OutputSplit::replicated, tree_phases, stats_buffer,
     "the paper's tree: all-reduces of the max of lse, the numerators and the denominators"},
    {tree_fused, "tree-fused", true, OutputSplit::replicated, tree_fused_phases, stats_buffer,
     "the tree with numerators and denominators summed in one all-reduce"},
    {tree_lse, "tree-lse", true, OutputSplit::replicated, tree_lse_phases, incoming_buffers,
     "(o, lse) reduced up a tree by the merge rule, inside scale-up domains first, o broadcast back"},
    {allgather_merge, "allgather-merge", true, OutputSplit::replicated, allgather_merge_phases, gathered_states,
     "one all-gather of every (o, lse), merged on every rank"},
    {pass_q, "pass-q", false, OutputSplit::by_sequence, pass_q_phases, pass_q_buffers,
     "Meta's pass-Q: query blocks travel the ring, partial states go home in one all-to-all"},
    {a2a, "a2a", false, OutputSplit::by_head, a2a_phases, incoming_buffers,
     "NVIDIA Helix: one all-to-all of each head slice's partial states to its owner"},
    {ag_rs, "ag-rs", false, OutputSplit::by_head, ag_rs_phases, all_lse_and_rescaled_o,
     "vLLM's decode context parallel: all-gather of lse, local rescale, reduce-scatter of o"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].id) != i) return false;
  }
  return true;
}
static_assert(kTable.size() == static_cast<std::size_t>(DecodeAlgorithm::ag_rs) + 1,
              "one descriptor per DecodeAlgorithm");
static_assert(in_enum_order(), "the table lists the algorithms in DecodeAlgorithm's order");

}  // namespace

std::span<const DecodeAlgorithmInfo> decode_algorithm_table() { return kTable; }

const DecodeAlgorithmInfo& algorithm_info(DecodeAlgorithm algorithm) {
  const auto index = static_cast<std::size_t>(algorithm);
  if (index >= kTable.size()) throw std::logic_error("no decode algorithm " + std::to_string(index));
  return kTable[index];
}

const DecodeAlgorithmInfo& algorithm_info(const DecodePlan& plan) {
  return plan.info != nullptr ? *plan.info : algorithm_info(plan.algorithm);
}

namespace {

template <typename Keep>
std::string names_of(Keep keep) {
  std::string names;
  for (const DecodeAlgorithmInfo& info : kTable) {
    if (keep(info)) names += (names.empty() ? "" : ", ") + std::string(info.name);
  }
  return names;
}

}  // namespace

std::string decode_algorithm_names() {
  return names_of([](const DecodeAlgorithmInfo&) { return true; });
}

std::string decode_algorithm_names(bool paper) {
  return names_of([paper](const DecodeAlgorithmInfo& info) { return info.in_paper == paper; });
}

std::string decode_algorithm_help() {
  std::string help = "Algorithms (--algo):\n";
  for (const DecodeAlgorithmInfo& info : kTable) {
    std::string name = info.name;
    name.resize(std::max<std::size_t>(name.size(), 16), ' ');
    help += "  " + name + " " + info.help + (info.in_paper ? "" : " (not in the paper's comparison)") + "\n";
  }
  return help;
}

}  // namespace treering::model
