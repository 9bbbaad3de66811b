// A decode algorithm added through the descriptor table alone (model/decode_algorithms.hpp): the test's own
// descriptor, with its own phase builder, is planned by model::make_plan, evaluated by the model, stepped, and run
// for real by realrun's cpu backend, which executes its phases by their roles. No code outside this file knows it.
#include <doctest/doctest.h>

#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// flat-reduce: every rank sends its (o, lse) straight to rank 0, which merges all p states at once; rank 0 sends
// the merged o back to each. (A tree-lse of fan-in p, built here without the tree's code.)
std::vector<model::Phase> flat_reduce_phases(const model::PhaseInputs& in) {
  std::vector<model::Transfer> up, down;
  for (int rank = 1; rank < in.ranks; ++rank) {
    up.push_back({rank, 0, in.sizes.state_bytes});
    down.push_back({0, rank, in.sizes.o_bytes});
  }
  return {{.kind = model::PhaseKind::attend, .role = model::PhaseRole::attention, .label = "attend"},
          {.kind = model::PhaseKind::transfers,
           .role = model::PhaseRole::state_reduce,
           .label = "all states to rank 0",
           .sends = up,
           .merge_states = in.ranks},
          {.kind = model::PhaseKind::transfers,
           .role = model::PhaseRole::output_broadcast,
           .label = "o from rank 0",
           .sends = down}};
}

model::CombineBuffers flat_reduce_buffers(const model::DecodePlan& plan, long long) {  // rank 0 takes p - 1 states
  return {static_cast<double>(plan.gpus.size() - 1) * plan.sizes.state_bytes, 0};
}

// An id past the table's: the enum's underlying int holds it, and nothing may look it up in the table.
const model::DecodeAlgorithmInfo kFlatReduce{static_cast<model::DecodeAlgorithm>(model::kDecodeAlgorithmCount),
                                             "flat-reduce",
                                             false,
                                             model::OutputSplit::replicated,
                                             flat_reduce_phases,
                                             flat_reduce_buffers,
                                             "every state to rank 0, merged there, o sent back"};

}  // namespace

TEST_CASE("a toy algorithm from its descriptor alone: planned, evaluated, stepped and run for real on 3 ranks") {
  const model::Workload workload = model::find_workload("paper-mha16");  // batch 1, 16 heads of 128, fp16
  const long long seq_len = 1001;
  const std::vector<int> gpus{0, 1, 2};
  const model::DecodePlan plan =
      model::make_plan(kFlatReduce, workload, seq_len, gpus, {0, 0, 0}, realrun::plan_options(realrun::Backend::cpu));
  CHECK(plan.info == &kFlatReduce);
  REQUIRE(plan.phases.size() == 3);

  // fp32 partial states (the cpu backend's): o = 16 x 128 x 4 B = 8,192 B, lse = 16 x 4 B = 64 B, a state 8,256 B.
  // Ranks 1 and 2 each send one state; rank 0 sends o to both: 16,384 B.
  const std::vector<double> bytes_expected{16384, 8256, 8256};
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, gpus);
  const model::DecodeResult predicted = model.evaluate(plan);
  CHECK(predicted.volume.total == 16384 + 2 * 8256);
  CHECK(predicted.latency_s > 0);
  CHECK(predicted.memory.workspace == 2 * 8256);  // rank 0's two incoming states
  CHECK(model::bytes_sent_per_rank(plan) == bytes_expected);
  // Rank 0's own steps: the attention, two receives of a state and their merge, two sends of o.
  int receives = 0, sends = 0;
  for (const model::Step& step : model::steps_of(plan, 0)) {
    receives += step.kind == model::StepKind::receive ? 1 : 0;
    sends += step.kind == model::StepKind::send ? 1 : 0;
  }
  CHECK(receives == 2);
  CHECK(sends == 2);

  const realrun::AttentionShape shape = realrun::shape_of(workload);
  const realrun::Dtype dtype = realrun::dtype_of(workload);
  const realrun::Inputs all = realrun::make_inputs(shape, dtype, 0, seq_len, 7);
  const std::vector<double> reference =
      realrun::reference_attention(shape, dtype, all.q.data(), all.k.data(), all.v.data(), seq_len);
  std::vector<std::vector<float>> o(3);
  std::vector<double> sent(3);
  realrun::run_local_ranks(3, [&](realrun::Transport& transport) {
    realrun::RankResult result = realrun::run_plan(plan, transport, 7);
    o[static_cast<size_t>(transport.rank())] = std::move(result.o);
    sent[static_cast<size_t>(transport.rank())] = result.bytes_sent;
  });
  CHECK(sent == bytes_expected);
  for (int rank = 0; rank < 3; ++rank) {
    CAPTURE(rank);
    CHECK(realrun::max_relative_error(o[static_cast<size_t>(rank)].data(), reference, shape.head_dim,
                                      realrun::held_output(plan, rank)) < 1e-5);
  }
}
