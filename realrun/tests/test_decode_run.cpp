// Every algorithm run for real on 1-4 ranks (threads of this process): the output equals the double-precision
// reference, and the bytes sent are the model's volume for the same plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

model::Workload small_gqa() {  // 4 query heads over 2 KV heads, head dim 64, batch 2, fp16
  model::Workload w = model::find_workload("paper-mha16");
  w.name = "small-gqa";
  w.query_heads = 4;
  w.kv_heads = 2;
  w.head_dim = 64;
  w.hidden_size = 256;
  w.dtype = "fp16";
  w.batch = 2;
  return w;
}

struct Outcome {
  std::vector<std::vector<float>> o;  // per rank
  std::vector<double> bytes;          // per rank
};

Outcome run(const model::DecodePlan& plan, int ranks) {
  Outcome outcome{std::vector<std::vector<float>>(static_cast<size_t>(ranks)),
                  std::vector<double>(static_cast<size_t>(ranks))};
  realrun::run_local_ranks(ranks, [&](realrun::Transport& transport) {
    realrun::RankResult result = realrun::run_plan(plan, transport, 7);
    outcome.o[static_cast<size_t>(transport.rank())] = std::move(result.o);
    outcome.bytes[static_cast<size_t>(transport.rank())] = result.bytes_sent;
  });
  return outcome;
}

}  // namespace

TEST_CASE("every algorithm on 1-4 ranks, even, uneven and empty shards: the reference's output, the model's bytes") {
  // The bytes: each rank's equal to the plan's (model::bytes_sent_per_rank), all of them to the model's volume.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  for (const model::Workload& workload : {model::find_workload("paper-mha16"), small_gqa()}) {
    const realrun::AttentionShape shape = realrun::shape_of(workload);
    const realrun::Dtype dtype = realrun::dtype_of(workload);
    for (int ranks = 1; ranks <= 4; ++ranks) {
      std::vector<int> gpus(static_cast<size_t>(ranks));
      std::iota(gpus.begin(), gpus.end(), 0);
      const model::DecodeModel model(topology, gpus);
      for (long long seq_len : {3LL, 64LL, 1001LL}) {  // 3 tokens on 4 ranks: one rank holds none
        const realrun::Inputs all = realrun::make_inputs(shape, dtype, 0, seq_len, 7);
        const std::vector<double> reference =
            realrun::reference_attention(shape, dtype, all.q.data(), all.k.data(), all.v.data(), seq_len);
        for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
          const model::DecodePlan plan =
              model.plan(algorithm, workload, seq_len, realrun::plan_options(realrun::Backend::cpu));
          const Outcome outcome = run(plan, ranks);
          CAPTURE(workload.name);
          CAPTURE(ranks);
          CAPTURE(seq_len);
          CAPTURE(std::string(model::to_string(algorithm)));
          std::vector<int> holders(reference.size(), 0);  // every value of the output is on some rank
          for (int rank = 0; rank < ranks; ++rank) {
            const auto held = realrun::held_output(plan, rank);
            CHECK(realrun::max_relative_error(outcome.o[static_cast<size_t>(rank)].data(), reference, shape.head_dim,
                                              held) < 1e-5);
            for (const auto& [first, count] : held) {
              for (long long i = first; i < first + count; ++i) ++holders[static_cast<size_t>(i)];
            }
          }
          CHECK(*std::min_element(holders.begin(), holders.end()) >= 1);
          const model::DecodeResult predicted = model.evaluate(plan);
          const double total = std::accumulate(outcome.bytes.begin(), outcome.bytes.end(), 0.0);
          CHECK(total == predicted.volume.total);
          CHECK(outcome.bytes == model::bytes_sent_per_rank(plan));  // rank by rank, exactly
        }
      }
    }
  }
}

TEST_CASE("plans the cpu backend cannot run are refused") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, {0, 1});
  const model::DecodePlan fp16_states =
      model.plan(model::DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 100);
  CHECK_THROWS_AS(run(fp16_states, 2), std::invalid_argument);  // made without plan_options(): 16-bit partial o
  const model::DecodePlan two = model.plan(model::DecodeAlgorithm::tree, model::find_workload("paper-mha16"), 100,
                                           realrun::plan_options(realrun::Backend::cpu));
  CHECK_THROWS_AS(run(two, 3), std::invalid_argument);  // a plan for 2 ranks on 3
}

TEST_CASE("the sampled reference from the inputs' hash equals the full reference at those states") {
  const realrun::AttentionShape shape{2, 8, 2, 64};  // g 4
  CHECK(realrun::sampled_states(shape) == std::vector<long long>{0, 2, 13, 15});
  CHECK(realrun::sampled_states({1, 16, 16, 128}) == std::vector<long long>{0, 15});  // MHA: half a group is 0
  for (realrun::Dtype dtype : {realrun::Dtype::bf16, realrun::Dtype::fp16}) {
    const long long tokens = 777;
    const realrun::Inputs all = realrun::make_inputs(shape, dtype, 0, tokens, 5);
    const std::vector<double> full =
        realrun::reference_attention(shape, dtype, all.q.data(), all.k.data(), all.v.data(), tokens);
    const std::vector<long long> states{0, 2, 13, 15, 6};
    const std::vector<double> sampled = realrun::hashed_reference(shape, dtype, 5, tokens, states);
    const auto d = static_cast<size_t>(shape.head_dim);
    for (size_t n = 0; n < states.size(); ++n) {
      for (size_t i = 0; i < d; ++i)
        CHECK(sampled[n * d + i] ==
              doctest::Approx(full[static_cast<size_t>(states[n]) * d + i]).scale(1e-12).epsilon(1e-12));
    }
  }
  CHECK_THROWS_AS(realrun::hashed_reference(shape, realrun::Dtype::bf16, 5, 10, {16}), std::logic_error);
}
