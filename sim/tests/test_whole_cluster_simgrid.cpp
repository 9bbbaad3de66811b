// Whole layouts replayed on our event loop and on SimGrid's network (the same rank programs, flows shared by
// each engine's own solver): the same finishes, breakdown and phases to 1e-9, where groups share NICs and cross
// an oversubscribed spine, up to 1,024 GPUs, with and without the TP groups' all-reduces after the combine.
#include <doctest/doctest.h>

#include <string>

#include "same_as_simgrid.hpp"
#include "treering/model/step.hpp"
#include "treering/sim/layout_replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// Every group, every event (no shortcut), in both engines.
void check_layout_same_as_simgrid(const model::LayoutModel& layouts, model::DecodeAlgorithm algorithm,
                                  const model::Workload& workload, long long tokens,
                                  model::Scope scope = model::Scope::attention) {
  std::optional<model::StepResult> step;
  if (scope != model::Scope::attention) {
    step = model::evaluate_step(layouts, layouts.attention(algorithm, workload, tokens), algorithm, workload, tokens,
                                scope);
  }
  sim::ReplayOptions options;
  options.skip_steady_rounds = false;
  options.one_of_identical = false;
  const sim::LayoutReplay events = sim::replay_layout(layouts, algorithm, workload, tokens, {}, step, options);
  options.in_simgrid = true;
  const sim::LayoutReplay simgrid = sim::replay_layout(layouts, algorithm, workload, tokens, {}, step, options);
  CHECK(events.replay.transfers_simulated == simgrid.replay.transfers_simulated);
  CHECK(events.replay.groups_replayed == events.replay.groups);
  sim::testing::check_same_finishes(events.replay, simgrid.replay);
  CHECK(events.attention_s == doctest::Approx(simgrid.attention_s).scale(1e-12).epsilon(1e-9));
  if (step) CHECK(*events.layer_s == doctest::Approx(*simgrid.layer_s).scale(1e-12).epsilon(1e-9));
}

topologies::Topology fat_tree(int nodes, int ratio, int radix) {
  return topologies::build_topology(
      std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml",
      {nodes,
       std::nullopt,
       {{"network.oversubscription", std::to_string(ratio)}, {"network.switch_radix", std::to_string(radix)}}});
}

}  // namespace

TEST_CASE("whole layouts, event loop = SimGrid: 8 CP groups on one NIC a node, and their TP groups' all-reduces") {
  std::vector<topologies::Setting> one_nic{{"nics.count", "1"}};
  for (int gpu = 1; gpu < 8; ++gpu) one_nic.push_back({"nics.gpu_to_nic." + std::to_string(gpu), "0"});
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {4, std::nullopt, one_nic});
  for (const char* placement : {"tp-inner", "cp-inner"}) {
    CAPTURE(placement);
    const model::LayoutModel layouts(topology,
                                     model::place_layout(topology, {8, 4}, {}, model::parse_layout_order(placement)));
    for (model::DecodeAlgorithm algorithm :
         {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree, model::DecodeAlgorithm::a2a}) {
      CAPTURE(model::to_string(algorithm));
      check_layout_same_as_simgrid(layouts, algorithm, model::find_workload("paper-mha16"), 1'000'003);
    }
    model::Workload llama = model::find_workload("llama3.1-8b");
    llama.batch = 8;
    check_layout_same_as_simgrid(layouts, model::DecodeAlgorithm::tree, llama, 128'001, model::Scope::layer);
  }
}

TEST_CASE("whole layouts, event loop = SimGrid: every algorithm across a 3:1 fat tree, 128 GPUs") {
  const topologies::Topology topology = fat_tree(16, 3, 16);
  const model::LayoutModel layouts(topology, model::place_layout(topology, {8, 16}));
  model::Workload workload = model::find_workload("paper-mha16");
  workload.batch = 4;
  for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    CAPTURE(model::to_string(algorithm));
    check_layout_same_as_simgrid(layouts, algorithm, workload, 1'000'003);
  }
}

TEST_CASE("whole layouts, event loop = SimGrid: 1,024 GPUs on a 3:1 fat tree, ring and tree") {
  const topologies::Topology topology = fat_tree(128, 3, 32);
  const model::LayoutModel layouts(topology, model::place_layout(topology, {8, 128}));
  for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree}) {
    CAPTURE(model::to_string(algorithm));
    check_layout_same_as_simgrid(layouts, algorithm, model::find_workload("paper-mha16"), 1'000'003);
  }
}
