// Decode latency: hand-derived alpha-beta cases and properties.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

topologies::Topology cluster(const std::string& name, int nodes) {
  const std::string where = name.find('/') == std::string::npos ? name : std::string(TREERING_SOURCE_DIR) + "/" + name;
  return topologies::build_topology(where, {nodes, {}});
}

const model::Workload& mha16() { return model::find_workload("paper-mha16"); }

// H100 attention kernel: 3 us launch + bytes / (3.35 TB/s x 0.80).
double h100_kernel_s(double bytes) { return 3e-6 + bytes / 2.68e12; }

}  // namespace

TEST_CASE("tree on 2 DGX H100, 64,000 tokens per GPU: attention, three tree/LL all-reduces, two small kernels") {
  const topologies::Topology topology = cluster("dgx-h100", 2);
  const model::DecodeModel model(topology);
  const model::DecodeResult tree = model.predict(DecodeAlgorithm::tree, mha16(), 16 * 64000);
  // Attention: 64,000 x 8 KiB + q 4 KiB + o 4 KiB + lse 64 B = 524,296,256 B.
  const double attention = h100_kernel_s(524296256.0);
  // All-reduces over 16 GPUs, tree/LL: 25.2 us + 2 x S / rate for S = 64, 4096, 64 bytes. The rate: LL's bus cap
  // across 2 nodes, 39 GB/s over 16 channels, on the 1 channel NCCL keeps for S < 2 x 512 threads x 8 B, times
  // NCCL's tree correction (1.0 at 64 B, 0.7 at 4 KiB = 64 B x 2^6).
  const double one_channel_Bps = 39e9 / 16;
  const double all_reduces = 3 * 25.2e-6 + 2 * 2 * 64 / one_channel_Bps + 2 * 4096 / (0.7 * one_channel_Bps);
  // Rescale touches the state (4160 B), divide touches o (4096 B).
  const double kernels = h100_kernel_s(4160) + h100_kernel_s(4096);
  CHECK(tree.breakdown.compute_s == doctest::Approx(attention + kernels).scale(1e-12));
  // The network's share of each tree/LL all-reduce: its 2 x log2(2) x 5.0 us steps (the NVLink chain, the
  // base latency and the transfer, paced by the tiers' 360 GB/s of NVLink rather than the NICs' 368, stay
  // intra-node).
  CHECK(tree.breakdown.inter_node_s == doctest::Approx(3 * 10e-6).scale(1e-12));
  CHECK(tree.breakdown.intra_node_s == doctest::Approx(all_reduces - 3 * 10e-6).scale(1e-12));
  CHECK(tree.latency_s == doctest::Approx(attention + kernels + all_reduces).scale(1e-12));
}

TEST_CASE("ring on 2 DGX H100: the node-crossing NIC sets each round's pace") {
  const topologies::Topology topology = cluster("dgx-h100", 2);
  const model::DecodeModel model(topology);
  const model::DecodeResult ring = model.predict(DecodeAlgorithm::ring, mha16(), 16 * 64000);
  // Each round: attend to 64,000 tokens (+ the fused merge reading and writing the 4160 B state) while
  // sending the 524,288,000 B block; the edges 7 -> 8 and 15 -> 0 cross nodes: p2p Simple 30.4 us (8.4 + 14 + 3 + 5.0)
  // + block / 46 GB/s = 11.4229 ms, far above the attention. 15 such rounds, then the last block's attention.
  const double attention = h100_kernel_s(524296256.0 + 2 * 4160);
  const double crossing = 30.4e-6 + 524288000.0 / 46e9;
  CHECK(ring.breakdown.compute_s == doctest::Approx(16 * attention + h100_kernel_s(4096)).scale(1e-12));
  CHECK(ring.breakdown.inter_node_s == doctest::Approx(15 * (crossing - attention)).scale(1e-12));
  CHECK(ring.breakdown.overlapped_communication_s == doctest::Approx(15 * attention).scale(1e-12));
  CHECK(ring.latency_s == doctest::Approx(15 * crossing + attention + h100_kernel_s(4096)).scale(1e-12));
  // Volume: every GPU forwards 15 blocks; 2 of the 16 ring edges cross nodes.
  CHECK(ring.volume.per_gpu == 15 * 524288000.0);
  CHECK(ring.volume.inter_node == 2 * 15 * 524288000.0);
  CHECK(ring.volume.intra_node == 14 * 15 * 524288000.0);
}

TEST_CASE("one GPU: no communication at all") {
  const topologies::Topology topology = cluster("dgx-h100", 1);
  const model::DecodeModel model(topology, {0});
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const model::DecodeResult result = model.predict(algorithm, mha16(), 100000);
    CHECK(result.breakdown.intra_node_s + result.breakdown.inter_node_s == 0.0);
    CHECK(result.volume.total == 0.0);
  }
}

TEST_CASE("properties across algorithms") {
  const topologies::Topology base_topology = cluster("dgx-h100", 16);
  const topologies::Topology faster_topology = cluster("topologies/examples/dgx-h100-4x-ib.yaml", 16);
  const model::DecodeModel base(base_topology);
  const model::DecodeModel faster(faster_topology);
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    CAPTURE(model::to_string(algorithm));
    double previous = 0;
    for (long long n : {80000LL, 320000LL, 1280000LL, 5120000LL}) {
      const model::DecodeResult result = base.predict(algorithm, mha16(), n);
      CHECK(result.latency_s > previous);  // more tokens never decode faster
      previous = result.latency_s;
      CHECK(faster.predict(algorithm, mha16(), n).latency_s <= result.latency_s);  // more bandwidth never hurts
      if (algorithm != DecodeAlgorithm::ring) {  // the combine's volume does not depend on N
        CHECK(result.volume.total == base.predict(algorithm, mha16(), 80000).volume.total);
      }
    }
  }
  // At the paper's largest point (128 GPUs, 5.12M tokens) tree beats ring.
  CHECK(base.predict(DecodeAlgorithm::tree, mha16(), 5120000).latency_s <
        base.predict(DecodeAlgorithm::ring, mha16(), 5120000).latency_s);
}

TEST_CASE("uneven and empty shards give finite results") {
  const topologies::Topology topology = cluster("dgx-h100", 1);
  const model::DecodeModel model(topology);
  for (DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    for (long long n : {3LL, 17LL, 1001LL}) {  // 3 < 8 GPUs: five empty shards
      const model::DecodeResult result = model.predict(algorithm, mha16(), n);
      CHECK(std::isfinite(result.latency_s));
      CHECK(result.latency_s > 0);
      CHECK(std::isfinite(result.volume.total));
    }
  }
  // 17 tokens on 8 GPUs: the largest shard holds 3 tokens, and sets the KV memory: 3 x 8 KiB.
  CHECK(model.predict(DecodeAlgorithm::tree, mha16(), 17).memory.kv_cache == 3 * 8192.0);
}

TEST_CASE("multi-layer workloads: token time, generation and the memory check") {
  const topologies::Topology topology = cluster("dgx-h100", 1);
  const model::DecodeModel model(topology);
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  const model::DecodeResult result = model.predict(DecodeAlgorithm::tree, llama, 128000);
  // Weights: 8.03e9 x 2 B read per token at 2.68 TB/s = 5.993 ms.
  CHECK(result.weights_s == doctest::Approx(8.03e9 * 2 / 2.68e12).scale(1e-12));
  CHECK(result.token_s == doctest::Approx(32 * result.latency_s + result.weights_s).scale(1e-12));
  CHECK(model.generation_s(DecodeAlgorithm::tree, llama, 128000, 1) == doctest::Approx(result.token_s).scale(1e-12));
  const double hundred = model.generation_s(DecodeAlgorithm::tree, llama, 128000, 100);
  CHECK(hundred > 100 * result.token_s);  // the context grows while generating
  CHECK_NOTHROW(model::check_fits(result, model));
  // 70B in 16-bit is 141 GB of weights alone: more than an 80 GB H100 holds.
  const model::DecodeResult big = model.predict(DecodeAlgorithm::tree, model::find_workload("llama3.1-70b"), 1000);
  CHECK_THROWS_AS(model::check_fits(big, model), std::invalid_argument);
}

TEST_CASE("ring with uneven shards: the sliding-window maxima equal a round-by-round evaluation") {
  // Round by round, the plain way: in round r rank i holds block (i - r) mod p; the round lasts
  // max over ranks of max(attention, transfer to rank i + 1); then the last blocks.
  const topologies::Topology topology = cluster("dgx-h100", 3);  // 24 GPUs, node boundaries at 8 and 16
  const model::DecodeModel model(topology);
  for (long long n : {24LL * 1000 + 5, 24LL * 1000 + 17, 7LL}) {
    CAPTURE(n);
    const model::DecodePlan plan = model.plan(DecodeAlgorithm::ring, mha16(), n);
    const int p = 24;
    const double merge_bytes = 2 * plan.sizes.state_bytes;
    auto tokens_of = [&](int rank, int round) {
      return plan.shards[static_cast<size_t>(((rank - round) % p + p) % p)].count;
    };
    double expected = 0;
    for (int round = 0; round < p - 1; ++round) {
      double slowest = 0;
      for (int rank = 0; rank < p; ++rank) {
        const long long tokens = tokens_of(rank, round);
        slowest = std::max(
            {slowest, model::attention_time_s(model.rates(rank), mha16(), plan.sizes, tokens, merge_bytes),
             model.p2p(rank, (rank + 1) % p).time_s(static_cast<double>(tokens) * plan.sizes.kv_bytes_per_token)});
      }
      expected += slowest;
    }
    double last = 0;
    for (int rank = 0; rank < p; ++rank) {
      last = std::max(
          last, model::attention_time_s(model.rates(rank), mha16(), plan.sizes, tokens_of(rank, p - 1), merge_bytes));
    }
    expected += last + model::kernel_time_s(model.rates(0), plan.sizes.o_bytes);  // then normalise o
    CHECK(model.evaluate(plan).latency_s == doctest::Approx(expected).scale(1e-12).epsilon(1e-12));
  }
}

TEST_CASE("prefill: compute-bound at half the peak, split over the GPUs") {
  const topologies::Topology topology = cluster("dgx-h100", 2);
  const model::DecodeModel model(topology);
  // llama3.1-8b, 128,000 tokens: 2 x 8.03e9 x 128e3 + 2 x 32 x 128e3^2 x 4096 = 6.3536e15 FLOP;
  // 16 x 989e12 x 0.5 FLOP/s -> 0.80308 s.
  const double flops = 2 * 8.03e9 * 128e3 + 2 * 32 * 128e3 * 128e3 * 4096;
  CHECK(model.prefill_s(model::find_workload("llama3.1-8b"), 128000) ==
        doctest::Approx(flops / (16 * 989e12 * 0.5)).scale(1e-12));
}

TEST_CASE("a generation from its two ends: the trapezoid, the first call paid once") {
  // 100 tokens at 1.0 ms first and 1.2 ms last, each carrying a 0.1 ms first call: 100 x 1.1 - 99 x 0.1 = 100.1 ms.
  CHECK(treering::model::generation_from_ends_s(100, 1.0e-3, 1.2e-3, 0.1e-3) == doctest::Approx(100.1e-3).scale(1e-12));
  CHECK(treering::model::generation_from_ends_s(1, 2.0e-3, 2.0e-3, 0.5e-3) ==
        doctest::Approx(2.0e-3).scale(1e-12));  // one token: itself
}
