#include <doctest/doctest.h>

#include "treering/model/attention_kernel.hpp"
#include "treering/model/compute.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"

using namespace treering;
using namespace treering::model;

TEST_CASE("split-KV chunks: the kernel's worked examples (H100, 132 SMs: a wave of 264 CTAs)") {
  const SplitKvShape llama8b{1, 8, 4, 128};  // 8 CTAs: 264 / 8 = 33 chunks once the tokens allow
  CHECK(split_kv_ctas(llama8b) == 8);
  CHECK(split_kv_chunks(llama8b, 132, 131072) == 33);
  CHECK(split_kv_chunks(llama8b, 132, 2112) == 33);  // 2,112 / 64 = 33 tiles
  CHECK(split_kv_chunks(llama8b, 132, 2111) == 32);
  CHECK(split_kv_chunks(llama8b, 132, 1000) == 15);  // floor(1,000 / 64)
  CHECK(split_kv_chunks(llama8b, 132, 10) == 1);     // shorter than a tile: one chunk
  CHECK(split_kv_chunks(llama8b, 132, 0) == 1);
  const SplitKvShape mha16{1, 16, 1, 128};  // 16 CTAs: floor(264 / 16) = 16, no partial second wave
  CHECK(split_kv_chunks(mha16, 132, 131072) == 16);
  const SplitKvShape head_dim_64{1, 8, 4, 64};  // 128-token tiles: 1,024 tokens are 8 chunks
  CHECK(split_kv_chunks(head_dim_64, 132, 1024) == 8);
  const SplitKvShape group_32{1, 8, 32, 128};  // two blocks of 16 query heads: 16 CTAs
  CHECK(split_kv_ctas(group_32) == 16);
  const SplitKvShape batch_64{64, 8, 4, 128};  // 512 CTAs are more than a wave: one chunk each
  CHECK(split_kv_chunks(batch_64, 132, 131072) == 1);
  CHECK_THROWS_AS(split_kv_chunks(llama8b, 0, 1000), std::invalid_argument);
  CHECK_THROWS_AS(split_kv_ctas({1, 0, 4, 128}), std::invalid_argument);
}

TEST_CASE("attention_time_s charges a calibrated shape's fixed cost, split per chunk and bandwidth") {
  const Workload& workload = find_workload("llama3.1-8b");  // batch 1, 8 KV heads, group 4, head dim 128
  const PlanSizes sizes = plan_sizes(workload, 4, 4);
  ComputeRates rates;
  rates.hbm_Bps = 2.68e12;
  rates.peak_flops = 989e12;
  rates.launch_s = 3e-6;
  rates.multiprocessors = 132;
  rates.attention_shapes.push_back({128, 4, 11e-6, 0.3e-6, 2.6e12});
  // 16,000 tokens: 33 chunks; one layer's K and V of 8 heads x 128 x 2 B = 4,096 B a token -> 65.536 MB, plus q (32 x
  // 128 x 2 B = 8,192), o (32 x 128 x 4 = 16,384) and lse (32 x 4 = 128): 65,560,704 B / 2.6e12 = 25.2157 us;
  // 11 + 0.3 x 33 + 25.2157 = 46.1157 us.
  CHECK(attention_time_s(rates, workload, sizes, 16000) == doctest::Approx(46.1157e-6).scale(1e-9).epsilon(1e-5));
  // 1,000 tokens: 15 chunks; 4,096,000 + 24,704 B = 4,120,704 B / 2.6e12 = 1.5849 us: 11 + 4.5 + 1.5849 = 17.0849 us.
  CHECK(attention_time_s(rates, workload, sizes, 1000) == doctest::Approx(17.0849e-6).scale(1e-9).epsilon(1e-4));
  // Another shape (llama3.2-1b: head dim 64) keeps the uncalibrated model: 3 us + bytes / 2.68 TB/s.
  const Workload& other = find_workload("llama3.2-1b");
  const PlanSizes other_sizes = plan_sizes(other, 4, 4);
  const double bytes =
      16000 * other_sizes.kv_bytes_per_token + other_sizes.q_bytes + other_sizes.o_bytes + other_sizes.stats_bytes;
  CHECK(attention_time_s(rates, other, other_sizes, 16000) == doctest::Approx(3e-6 + bytes / 2.68e12).scale(1e-9));
  CHECK(attention_time_s(rates, workload, sizes, 0) == 0.0);
}

TEST_CASE(
    "a device shared by P loopback ranks gives each 1/P of a calibrated shape's bandwidth, and the whole GPU's "
    "chunks") {
  topologies::ClusterSpec spec = topologies::load_cluster("loopback-h100");  // one H100 (132 SMs), shared_device
  spec.groups[0].gpus_per_node = 2;
  spec.calibration = topologies::Calibration{};
  spec.calibration->attention_shapes.push_back({128, 4, 11e-6, 0.3e-6, 2.6e12});
  const topologies::Topology topology(spec);
  const ComputeRates rates = compute_rates(topology, 0);
  REQUIRE(rates.attention_shapes.size() == 1);
  CHECK(rates.attention_shapes[0].bandwidth_Bps == doctest::Approx(1.3e12).scale(1e12));
  CHECK(rates.multiprocessors == 132);
  // 16,000 tokens of llama3.1-8b on one rank: 33 chunks, 65,560,704 B / 1.3e12 = 50.4313 us: 11 + 9.9 + 50.4313 us.
  const Workload& workload = find_workload("llama3.1-8b");
  CHECK(attention_time_s(rates, workload, plan_sizes(workload, 4, 4), 16000) ==
        doctest::Approx(71.3313e-6).scale(1e-9).epsilon(1e-5));
}
