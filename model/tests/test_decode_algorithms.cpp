// The decode algorithms' table (decode_algorithms.hpp): one descriptor per algorithm, read by name lookups,
// the paper's set, the output splits and the help.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "treering/model/decode_algorithms.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering;
using model::DecodeAlgorithm;

TEST_CASE("the table: every name parses back to its algorithm; the paper's five; who splits the output") {
  for (const model::DecodeAlgorithmInfo& info : model::decode_algorithm_table()) {
    CHECK(model::parse_decode_algorithm(info.name) == info.id);
    CHECK(std::string(model::to_string(info.id)) == info.name);
  }
  // The paper compares ring, tree and its variants (Tree Attention, arXiv 2408.04093); the engines' combines
  // (Meta's pass-Q, NVIDIA Helix, vLLM's DCP) are asked for by name.
  CHECK(model::decode_algorithm_names(true) == "ring, tree, tree-fused, tree-lse, allgather-merge");
  CHECK(model::decode_algorithm_names(false) == "pass-q, a2a, ag-rs");
  CHECK(model::paper_decode_algorithms().size() == 5);
  CHECK(model::all_decode_algorithms().size() == model::kDecodeAlgorithmCount);
  // pass-q leaves each sequence's output with its owner; Helix and vLLM leave a head slice on each rank.
  CHECK(model::algorithm_info(DecodeAlgorithm::pass_q).output_split == model::OutputSplit::by_sequence);
  CHECK(model::algorithm_info(DecodeAlgorithm::a2a).output_split == model::OutputSplit::by_head);
  CHECK(model::algorithm_info(DecodeAlgorithm::tree_lse).output_split == model::OutputSplit::replicated);
}

TEST_CASE("an unknown name is bad input naming every algorithm; a value outside the table is a bug") {
  CHECK_THROWS_WITH_AS(model::parse_decode_algorithm("tree-ring"),
                       "unknown algorithm 'tree-ring' (expected one of: ring, tree, tree-fused, tree-lse, "
                       "allgather-merge, pass-q, a2a, ag-rs)",
                       topologies::InputError);
  CHECK_THROWS_AS(model::algorithm_info(static_cast<DecodeAlgorithm>(model::kDecodeAlgorithmCount)), std::logic_error);
}

TEST_CASE("a plan's phases say their role: an implementation's own work in front does not hide the tree's") {
  const model::Workload workload = model::find_workload("paper-mha16");
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(topologies::load_impl_profile("paper-torch-llama"));
  const model::DecodePlan plan = model::make_plan(DecodeAlgorithm::tree, workload, 4096, {0, 1}, {0, 0}, options);
  // paper-torch-llama puts its copies and host round trips before the combine (plan.hpp, apply_impl).
  REQUIRE(plan.phases.front().role == model::PhaseRole::implementation);
  CHECK(model::has_phase(plan, model::PhaseRole::lse_max));
  CHECK(model::has_phase(plan, model::PhaseRole::numerator_sum));
  CHECK(model::has_phase(plan, model::PhaseRole::denominator_sum));
  CHECK_FALSE(model::has_phase(plan, model::PhaseRole::kv_ring));
}
