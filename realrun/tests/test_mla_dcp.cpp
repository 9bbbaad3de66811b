// MLA decode with decode context parallelism on 1, 2 and 4 ranks (threads of this process, the local transport):
// every rank's held output equals the one-rank double-precision reference, and the bytes are the query all-gather's
// plus the model's for the combine.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "treering/model/decode.hpp"
#include "treering/model/workload.hpp"
#include "treering/realrun/mla_run.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// DeepSeek-V2-Lite's attention made small: 6 query heads (uneven over 4 ranks), latent 64 + 16, nope 32, v 32,
// batch 2.
model::Workload small_mla() {
  model::Workload w = model::find_workload("deepseek-v2-lite");
  w.name = "small-mla";
  w.query_heads = 6;
  w.kv_lora_rank = 64;
  w.qk_rope_head_dim = 16;
  w.qk_nope_head_dim = 32;
  w.v_head_dim = 32;
  w.head_dim = 80;
  w.batch = 2;
  return w;
}

struct Outcome {
  std::vector<std::vector<float>> o;  // per rank
  std::vector<double> bytes;          // per rank
};

Outcome run(const model::DecodePlan& plan, const realrun::MlaShape& shape, int ranks) {
  Outcome outcome{std::vector<std::vector<float>>(static_cast<size_t>(ranks)),
                  std::vector<double>(static_cast<size_t>(ranks))};
  realrun::run_local_ranks(ranks, [&](realrun::Transport& transport) {
    realrun::RankResult result = realrun::run_mla_plan(plan, shape, realrun::Dtype::bf16, transport, 7);
    outcome.o[static_cast<size_t>(transport.rank())] = std::move(result.o);
    outcome.bytes[static_cast<size_t>(transport.rank())] = result.bytes_sent;
  });
  return outcome;
}

}  // namespace

TEST_CASE("MLA with DCP on 1, 2 and 4 ranks: every combine but ring and pass-q equals the one-rank reference") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::Workload mla = small_mla();
  REQUIRE_NOTHROW(model::validate(mla));
  const realrun::MlaShape shape = realrun::mla_shape_of(mla);
  const model::Workload combine = realrun::combine_workload(mla);
  for (int ranks : {1, 2, 4}) {
    std::vector<int> gpus(static_cast<size_t>(ranks));
    std::iota(gpus.begin(), gpus.end(), 0);
    const model::DecodeModel model(topology, gpus);
    for (long long seq_len : {3LL, 301LL}) {  // 3 tokens on 4 ranks: one rank holds none
      const std::vector<double> reference = realrun::mla_reference(shape, realrun::Dtype::bf16, 7, seq_len);
      for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
        const model::DecodePlan plan =
            model.plan(algorithm, combine, seq_len, realrun::plan_options(realrun::Backend::cpu));
        CAPTURE(ranks);
        CAPTURE(seq_len);
        CAPTURE(std::string(model::to_string(algorithm)));
        if (algorithm == model::DecodeAlgorithm::ring || algorithm == model::DecodeAlgorithm::pass_q) {
          CHECK_THROWS_AS(run(plan, shape, ranks), topologies::InputError);
          continue;
        }
        const Outcome outcome = run(plan, shape, ranks);
        std::vector<int> holders(reference.size(), 0);
        for (int rank = 0; rank < ranks; ++rank) {
          const auto held = realrun::held_output(plan, rank);
          // fp32 accumulation and merges against double: the GQA kernel's 1e-5 (test_decode_run.cpp).
          CHECK(realrun::max_relative_error(outcome.o[static_cast<size_t>(rank)].data(), reference, shape.kv_lora_rank,
                                            held) < 1e-5);
          for (const auto& [first, count] : held) {
            for (long long i = first; i < first + count; ++i) ++holders[static_cast<size_t>(i)];
          }
        }
        CHECK(*std::min_element(holders.begin(), holders.end()) >= 1);
        std::vector<double> expected = model::bytes_sent_per_rank(plan);
        for (double& bytes : expected) bytes += realrun::mla_query_gather_bytes(shape, ranks);
        CHECK(outcome.bytes == expected);
      }
    }
  }
}

TEST_CASE("the query all-gather's bytes") {
  // deepseek-v3, batch 1, 4 ranks: 3 blocks of 32 heads x 576 values x 2 B.
  const realrun::MlaShape v3 = realrun::mla_shape_of(model::find_workload("deepseek-v3"));
  CHECK(realrun::mla_query_gather_bytes(v3, 4) == 3.0 * 32 * 576 * 2);
  CHECK(realrun::mla_query_gather_bytes(v3, 1) == 0.0);
  // 6 heads on 4 ranks: slices of 2, 2, 1, 1 heads, every block padded to 2 heads x batch 2 x 80 values.
  const realrun::MlaShape small = realrun::mla_shape_of(small_mla());
  CHECK(realrun::mla_query_gather_bytes(small, 4) == 3.0 * 2 * 2 * 80 * 2);
}
