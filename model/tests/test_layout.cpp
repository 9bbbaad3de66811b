// TP x CP layouts: where the groups land, which heads a GPU holds, and the CP groups' combines.
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/model/layout_model.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;
using model::Layout;

namespace {

const topologies::Topology& two_dgx() {
  static const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  return topology;
}

}  // namespace

TEST_CASE("tp 8 x cp 2 on two DGX: TP groups are the nodes, CP groups pair GPU t with GPU 8 + t") {
  const model::LayoutGroups groups = model::place_layout(two_dgx(), Layout{8, 2});
  REQUIRE(groups.cp_groups.size() == 8);
  CHECK(groups.cp_groups[3] == std::vector<int>{3, 11});
  CHECK(groups.tp_groups[1] == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK_FALSE(groups.tp_crosses_domains);
  const model::LayoutGroups inner = model::place_layout(two_dgx(), Layout{8, 2}, {}, model::LayoutOrder::cp_inner);
  CHECK(inner.cp_groups[3] == std::vector<int>{6, 7});  // CP pairs inside a node, TP across both
  CHECK(inner.tp_crosses_domains);
  CHECK(model::place_layout(two_dgx(), Layout{16, 1}).tp_crosses_domains);
}

TEST_CASE("impossible layouts are refused with the reason") {
  CHECK_THROWS_WITH_AS(model::place_layout(two_dgx(), Layout{8, 4}), "tp 8 x cp 4 needs 32 GPUs; the cluster has 16",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model::place_layout(two_dgx(), Layout{2, 2}, {0, 1, 2}),
                       "tp 2 x cp 2 needs 4 GPUs; --gpus names 3", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model::place_layout(two_dgx(), Layout{16, 1}, {}, model::LayoutOrder::tp_inner, true),
      "tp 16 x cp 1: a TP group of 16 GPUs (GPU 0 to 15) spans 2 scale-up domains (lower --tp, or let TP "
      "cross domains)",
      std::invalid_argument);
  CHECK_THROWS_AS(model::place_layout(two_dgx(), Layout{0, 2}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(model::head_slice(model::find_workload("paper-mha16"), 3),
                       "paper-mha16: its 16 query heads do not split over tp 3", std::invalid_argument);
  model::Workload odd = model::find_workload("llama3.1-8b");  // 8 KV heads: tp 16 replicates each on 2 GPUs,
  odd.query_heads = 48;                                       // tp 12 can do neither
  odd.hidden_size = 48 * 128;
  CHECK_THROWS_AS(model::head_slice(odd, 12), std::invalid_argument);
}

TEST_CASE("a head slice: query heads split, KV heads split or replicated, parameters split") {
  const model::Workload llama = model::find_workload("llama3.1-70b");  // 64 query, 8 KV heads
  const model::Workload eight = model::head_slice(llama, 8);
  CHECK(eight.query_heads == 8);
  CHECK(eight.kv_heads == 1);
  CHECK(eight.parameters == doctest::Approx(70.6e9 / 8).scale(1e-12));
  const model::Workload sixteen = model::head_slice(llama, 16);
  CHECK(sixteen.query_heads == 4);
  CHECK(sixteen.kv_heads == 1);  // each KV head on 2 GPUs
}

TEST_CASE("tp 1: the layout is today's K/V split over every GPU") {
  const model::LayoutModel layouts(two_dgx(), model::place_layout(two_dgx(), Layout{1, 16}));
  const model::DecodeModel all(two_dgx());
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const model::LayoutAttention a = layouts.attention(algorithm, model::find_workload("paper-mha16"), 1000000);
    const model::DecodeResult r = all.predict(algorithm, model::find_workload("paper-mha16"), 1000000);
    CHECK(a.slowest.latency_s == r.latency_s);
    CHECK(a.volume.total == r.volume.total);
  }
}

TEST_CASE("tp 8 x cp 2, pass-q at batch 1: each pair of GPUs runs the 2-head slice across the network") {
  const model::LayoutModel layouts(two_dgx(), model::place_layout(two_dgx(), Layout{8, 2}));
  const model::LayoutAttention a =
      layouts.attention(DecodeAlgorithm::pass_q, model::find_workload("paper-mha16"), 128000);
  // A GPU holds 2 of the 16 heads (2 KV heads): 64,000 tokens x 2 x 2 x 128 x 2 B = 65,536,000 B, + q 512 B,
  // o 512 B, lse 8 B. The q hop (512 B) and the state home (520 B) cross the network: 30.4 us (8.4 + 14 + 3 + 5.0) +
  // bytes / 46 GB/s.
  const double attention = 3e-6 + (65536000.0 + 512 + 512 + 8) / 2.68e12;
  const double expected = 30.4e-6 + 512 / 46e9 + attention + 30.4e-6 + 520 / 46e9 + 3e-6 + 2 * 520 / 2.68e12;
  CHECK(a.slowest.latency_s == doctest::Approx(expected).scale(1e-12).epsilon(1e-12));
  CHECK(a.volume.inter_node == 8 * (512 + 520));  // 8 pairs
  CHECK(a.volume.intra_node == 0);
}
