// pass-q, a2a and ag-rs on one DGX H100 and across two: hand-derived latency, tiers and bytes per rank.
// Figures: an H100 kernel is 3 us + bytes / (3.35 TB/s x 0.80); a send inside a DGX 11.8 us + bytes / 360 GB/s
// (NVLink through the NVSwitch), across nodes 30.4 us (8.4 + 14 + 3 for the shared buffer slot + 5.0 for the receiver's
// clear-to-send) + bytes / 46 GB/s (a 400 Gb/s NIC): the send/recv model's. A send inside a DGX of under 64 KiB runs on
// one NCCL channel (NCCL's smallest part is 512 KiB / 8: src/enqueue.cc addP2pToPlan), which moves 15 GB/s (the
// preset's p2p_channel_bandwidth): 11.8 us + bytes / 15 GB/s, while a port still carries several such sends at once up
// to 360 GB/s.
#include <doctest/doctest.h>

#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::DecodeAlgorithm;

namespace {

double kernel_s(double bytes) { return 3e-6 + bytes / 2.68e12; }
double nvlink_s(double bytes) { return 11.8e-6 + bytes / 15e9; }  // one channel
double network_s(double bytes) { return 30.4e-6 + bytes / 46e9; }

model::Workload mha16(int batch) {
  model::Workload w = model::find_workload("paper-mha16");
  w.batch = batch;
  return w;
}

const topologies::Topology& dgx(int nodes) {
  static const topologies::Topology one = topologies::build_topology("dgx-h100", {1, {}});
  static const topologies::Topology two = topologies::build_topology("dgx-h100", {2, {}});
  return nodes == 1 ? one : two;
}

}  // namespace

TEST_CASE("pass-q, batch 1, 2 GPUs of a DGX: the query hops once, the other rank attends, its state comes home") {
  const model::DecodeModel model(dgx(1), {0, 1});
  const model::DecodeResult r = model.predict(DecodeAlgorithm::pass_q, mha16(1), 128000);
  // Rank 0 owns the only sequence: it attends its 64,000 tokens (64,000 x 8 KiB + q 4 KiB + o 4 KiB + lse 64 B)
  // while its q (4 KiB) travels to rank 1, which attends as soon as q arrives, then sends its state (o 4 KiB +
  // lse 64 B) home; rank 0 merges the two states (2 x 4160 B).
  const double attention = kernel_s(524296256.0);
  const double expected = nvlink_s(4096) + attention + nvlink_s(4160) + kernel_s(2 * 4160);
  CHECK(r.latency_s == doctest::Approx(expected).scale(1e-12).epsilon(1e-12));
  CHECK(r.breakdown.compute_s == doctest::Approx(attention + kernel_s(2 * 4160)).scale(1e-12).epsilon(1e-12));
  CHECK(r.breakdown.intra_node_s == doctest::Approx(nvlink_s(4096) + nvlink_s(4160)).scale(1e-12).epsilon(1e-12));
  CHECK(r.volume.intra_node == 4096 + 4160);
  CHECK(r.volume.per_gpu == 4160);
  CHECK(model::bytes_sent_per_rank(model.plan(DecodeAlgorithm::pass_q, mha16(1), 128000)) ==
        std::vector<double>{4096, 4160});
}

TEST_CASE("pass-q, batch 1 across two DGX: the hop and the way home both cross the network") {
  const model::DecodeModel model(dgx(2), {0, 8});
  const model::DecodeResult r = model.predict(DecodeAlgorithm::pass_q, mha16(1), 128000);
  const double attention = kernel_s(524296256.0);
  CHECK(r.latency_s ==
        doctest::Approx(network_s(4096) + attention + network_s(4160) + kernel_s(8320)).scale(1e-12).epsilon(1e-12));
  CHECK(r.breakdown.inter_node_s == doctest::Approx(network_s(4096) + network_s(4160)).scale(1e-12).epsilon(1e-12));
  CHECK(r.volume.inter_node == 8256);
  CHECK(r.volume.intra_node == 0);
}

TEST_CASE("pass-q, batch 4 on 4 GPUs: four rounds of a quarter of the attention, then a 3-way all-to-all") {
  const model::DecodeModel model(dgx(1), {0, 1, 2, 3});
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::pass_q, mha16(4), 100000);
  const model::DecodeResult r = model.evaluate(plan);
  // Each rank owns one sequence. A round attends one sequence's q to the 25,000-token shard: a quarter of
  // 25,000 x 32 KiB + q 16 KiB + o 16 KiB + lse 256 B = 204,808,256 B; the 4 KiB q block's hop (11.8 us)
  // hides under it. Then every rank sends each other rank one sequence's state (4160 B): 3 sends leave each
  // port and 3 enter each, at once, each on one channel: 11.8 us + max(3 x 4160 B / 360 GB/s, 4160 B / 15 GB/s);
  // each owner merges 4 states of 4160 B.
  const double round = kernel_s(204808256.0);
  CHECK(r.latency_s == doctest::Approx(4 * round + nvlink_s(4160) + kernel_s(4 * 4160)).scale(1e-12).epsilon(1e-12));
  CHECK(r.breakdown.overlapped_communication_s == doctest::Approx(3 * nvlink_s(4096)).scale(1e-12).epsilon(1e-12));
  // Each rank forwards 3 query blocks of 4 KiB and sends 3 states: 12,288 + 12,480 B.
  CHECK(model::bytes_sent_per_rank(plan) == std::vector<double>(4, 24768));
  CHECK(r.volume.total == 4 * 24768);
}

TEST_CASE("a2a, batch 1 on 4 GPUs: one all-to-all of 4-head slices, messages of batch x heads, not context") {
  const model::DecodeModel model(dgx(1), {0, 1, 2, 3});
  const model::DecodeResult r = model.predict(DecodeAlgorithm::a2a, mha16(1), 100000);
  // Attention over 25,000 tokens: 25,000 x 8 KiB + 4 KiB + 4 KiB + 64 B. Each rank owns 4 of the 16 heads and
  // receives their states from 3 ranks: 4 x (128 x 2 B + 4 B) = 1040 B each; ports carry 3 such sends at once,
  // each on one channel (1040 B / 15 GB/s > 3 x 1040 B / 360 GB/s). The merge reads 4 states of a quarter each:
  // 4160 B.
  const double attention = kernel_s(204808256.0);
  CHECK(r.latency_s == doctest::Approx(attention + nvlink_s(1040) + kernel_s(4160)).scale(1e-12).epsilon(1e-12));
  CHECK(r.volume.per_gpu == 3 * 1040);
  // Ten times the context: the same messages.
  CHECK(model.predict(DecodeAlgorithm::a2a, mha16(1), 1000000).volume.per_gpu == 3 * 1040);
}

TEST_CASE("ag-rs on 4 GPUs, rings as the cpu backend runs them: lse gathered, o rescaled, reduce-scattered") {
  const model::DecodeModel model(dgx(1), {0, 1, 2, 3});
  model::PlanOptions rings;
  rings.collective_algorithm = model::CollectiveAlgorithm::ring;
  rings.partial_o_bytes = 4;
  const model::DecodePlan plan = model.plan(DecodeAlgorithm::ag_rs, mha16(1), 100000, rings);
  // All-gather of 4 x 64 B of lse: each rank sends 3 blocks of 64 B. Reduce-scatter of o (2048 fp32): each rank
  // sends every chunk of 512 values but its own, 1536 x 4 B. 192 + 6144 = 6336 B per rank.
  CHECK(model::bytes_sent_per_rank(plan) == std::vector<double>(4, 6336));
  const model::DecodeResult r = model.evaluate(plan);
  const double attention = kernel_s(25000.0 * 8192 + 4096 + 8192 + 64);  // o in fp32: 8 KiB
  const double rescale = kernel_s(8192 + 64 + 4 * 64);                   // the state and every rank's lse
  const double gather_s = model.collective(plan.phases.at(1)).chosen.time_s;
  const double scatter_s = model.collective(plan.phases.at(3)).chosen.time_s;
  CHECK(plan.phases.at(1).bytes == 256);
  CHECK(plan.phases.at(3).bytes == 8192);
  CHECK(r.latency_s == doctest::Approx(attention + gather_s + rescale + scatter_s).scale(1e-12).epsilon(1e-12));
}

TEST_CASE("which rank holds which part of the output") {
  const model::DecodeModel model(dgx(1), {0, 1});
  model::Workload w = mha16(2);
  w.query_heads = w.kv_heads = 4;
  w.head_dim = 8;
  w.hidden_size = 32;
  using Spans = std::vector<std::pair<long long, long long>>;
  auto held = [&](DecodeAlgorithm algorithm, int rank) {
    Spans spans;
    for (const model::ValueSpan& s : model::output_held(model.plan(algorithm, w, 100), rank))
      spans.emplace_back(s.first, s.count);
    return spans;
  };
  // o is [2 sequences][4 heads][8]: 64 values. a2a: rank 1 owns heads 2-3 of both sequences.
  CHECK(held(DecodeAlgorithm::a2a, 1) == Spans{{16, 16}, {48, 16}});
  CHECK(held(DecodeAlgorithm::pass_q, 1) == Spans{{32, 32}});  // sequence 1
  CHECK(held(DecodeAlgorithm::ag_rs, 0) == Spans{{0, 32}});    // chunk 0 of 2
  CHECK(held(DecodeAlgorithm::tree, 1) == Spans{{0, 64}});
  CHECK(model::output_split(DecodeAlgorithm::ag_rs) == model::OutputSplit::by_head);
}
