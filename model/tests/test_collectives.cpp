// The collective model on hand-derived cases (NCCL 2.30.7 constants, microseconds: see comm_group.cpp).
#include <doctest/doctest.h>

#include <stdexcept>

#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::Protocol;

namespace {

model::CommGroup dgx(int nodes, std::vector<int> gpus = {}, const std::string& cluster = "dgx-h100") {
  const std::string where =
      cluster.find('/') == std::string::npos ? cluster : std::string(TREERING_SOURCE_DIR) + "/" + cluster;
  return model::describe_group(topologies::build_topology(where, {nodes, {}}), std::move(gpus));
}

model::CollectiveRequest request(CollectiveOp op, double bytes, std::optional<CollectiveAlgorithm> algorithm = {},
                                 std::optional<Protocol> protocol = {}) {
  model::CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  r.algorithm = algorithm;
  r.protocol = protocol;
  return r;
}

constexpr double kGiB = 1073741824.0;

}  // namespace

TEST_CASE("small all-reduce on 2 nodes: tree/LL at NCCL's 25.2 us") {
  // 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0) = 25.2 us; 2 x 8 B at LL's bus cap across 2 nodes (39 GB/s, NCCL's
  // llMaxBws) on 1 of its 16 channels (8 B < 16 x 512 threads x 8 B: nccl_channels_used) adds 16 / (39e9 / 16) s.
  auto estimate = model::estimate_collective(dgx(2), request(CollectiveOp::allreduce, 8));
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::tree);
  CHECK(estimate.chosen.protocol == Protocol::ll);
  CHECK(estimate.chosen.latency_s == doctest::Approx(25.2e-6).scale(1e-12));
  CHECK(estimate.chosen.time_s == doctest::Approx(25.2e-6 + 16 / (39e9 / 16)).scale(1e-12));
}

TEST_CASE("large all-reduce in one node: in-switch reduction wins") {
  // NVLS: 25 us + 1 GiB / 270 GB/s = 3.9768 ms; ring/Simple: 8.4 + 14 x 3.4 us + 2 x 7/8 x 1 GiB / 360 GB/s.
  auto estimate = model::estimate_collective(dgx(1), request(CollectiveOp::allreduce, kGiB));
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::nvls);
  CHECK(estimate.chosen.time_s == doctest::Approx(25e-6 + kGiB / 270e9).scale(1e-12));
  auto ring = model::estimate_collective(
      dgx(1), request(CollectiveOp::allreduce, kGiB, CollectiveAlgorithm::ring, Protocol::simple));
  CHECK(ring.chosen.time_s == doctest::Approx(56e-6 + 1.75 * kGiB / 360e9).scale(1e-12));
  CHECK(ring.bus_bandwidth_Bps == doctest::Approx(ring.algorithm_bandwidth_Bps * 14.0 / 8.0).scale(1e-12));
}

TEST_CASE("forced ring across 2 nodes: the longest chain holds 4 network steps, NCCL's tuner counts 2") {
  // 30 dependent steps around a 16-edge ring with a node boundary every 8 edges: the chain that starts just after
  // a boundary holds ceil(30 / 8) = 4 boundaries. (8.4 + (30 - 4) x max(3.4, 3 post overhead) + 4 x 14) x 1.4
  // (multi-node ring/Simple) = 152.8 x 1.4 = 213.92 us; NCCL's own count (2 network steps) gives 184.24 us.
  // 2 x 15/16 x 1 GiB / min(360, 368) GB/s.
  auto estimate = model::estimate_collective(
      dgx(2), request(CollectiveOp::allreduce, kGiB, CollectiveAlgorithm::ring, Protocol::simple));
  CHECK(estimate.chosen.latency_s == doctest::Approx(213.92e-6).scale(1e-12));
  CHECK(estimate.chosen.transfer_s == doctest::Approx(1.875 * kGiB / 360e9).scale(1e-12));
  // 2 of the 16 ring edges leave a node: 1/8 of what each GPU sends goes through the NICs.
  CHECK(estimate.scale_out_bytes_per_gpu == doctest::Approx(1.875 * kGiB / 8).scale(1e-12));
}

TEST_CASE("two-level hierarchical all-reduce (not NCCL's, offered with AlgorithmSet::all)") {
  // 8.4 + 2 x 7 x 3.4 + 2 x 1 x 14 = 84 us; max(1.75 S / 360 GB/s, S / 8 / 46 GB/s) = 1.75 S / 360 GB/s.
  auto estimate = model::estimate_collective(
      dgx(2), request(CollectiveOp::allreduce, kGiB, CollectiveAlgorithm::hierarchical, Protocol::simple));
  CHECK(estimate.chosen.latency_s == doctest::Approx(84e-6).scale(1e-12));
  CHECK(estimate.chosen.transfer_s == doctest::Approx(1.75 * kGiB / 360e9).scale(1e-12));
  model::CollectiveRequest nccl_only = request(CollectiveOp::allreduce, kGiB);
  for (const auto& candidate : model::estimate_collective(dgx(2), nccl_only).candidates) {
    CHECK(candidate.algorithm != CollectiveAlgorithm::hierarchical);
  }
}

TEST_CASE(
    "send/recv across nodes: Simple p2p, 8.4 + 14 us + the proxy's post of a shared buffer slot (3 us) + the "
    "clear-to-send (5 us)") {
  auto estimate = model::estimate_collective(dgx(2, {0, 8}), request(CollectiveOp::sendrecv, 8));
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::p2p);
  CHECK(estimate.chosen.time_s == doctest::Approx(30.4e-6 + 8 / 46e9).scale(1e-12));
  auto inside = model::estimate_collective(dgx(1, {0, 1}), request(CollectiveOp::sendrecv, 1e6));
  // 1 MB between 2 GPUs of a node: 16 channels (32 per peer halved once for 2 ranks; 1e6 / 64 KiB parts > 16)
  // x 15 GB/s = 240 GB/s, under the NVLink port's 360: 8.4 + 3.4 us + 1e6 B / 240 GB/s.
  CHECK(inside.chosen.time_s == doctest::Approx(8.4e-6 + 3.4e-6 + 1e6 / 240e9).scale(1e-12));
}

TEST_CASE("all-gather by ring in one node") {
  // 8.4 + 7 x 3.4 = 32.2 us; 7/8 x 8 MiB / 360 GB/s.
  auto estimate = model::estimate_collective(
      dgx(1), request(CollectiveOp::allgather, 8388608, CollectiveAlgorithm::ring, Protocol::simple));
  CHECK(estimate.chosen.time_s == doctest::Approx(32.2e-6 + 0.875 * 8388608 / 360e9).scale(1e-12));
}

TEST_CASE("properties: time grows with size; more NIC bandwidth never hurts") {
  model::CommGroup base = dgx(16);
  model::CommGroup faster = dgx(16, {}, "topologies/examples/dgx-h100-4x-ib.yaml");
  double previous = 0;
  for (double bytes = 8; bytes <= 16 * kGiB; bytes *= 4) {
    for (CollectiveOp op : {CollectiveOp::allreduce, CollectiveOp::allgather, CollectiveOp::broadcast}) {
      CAPTURE(bytes);
      CHECK(model::estimate_collective(faster, request(op, bytes)).chosen.time_s <=
            model::estimate_collective(base, request(op, bytes)).chosen.time_s);
    }
    double now = model::estimate_collective(base, request(CollectiveOp::allreduce, bytes)).chosen.time_s;
    CHECK(now >= previous);
    previous = now;
  }
}

TEST_CASE("impossible requests are refused; one GPU takes no time") {
  CHECK_THROWS_AS(model::estimate_collective(dgx(2), request(CollectiveOp::allreduce, 8, CollectiveAlgorithm::nvls)),
                  std::invalid_argument);  // NVLS alone does not cross nodes
  CHECK_THROWS_AS(model::estimate_collective(dgx(1), request(CollectiveOp::sendrecv, 8)), std::invalid_argument);
  CHECK_THROWS_AS(model::estimate_collective(dgx(1), request(CollectiveOp::allreduce, -1)), std::invalid_argument);
  auto alone = model::estimate_collective(dgx(1, {3}), request(CollectiveOp::allreduce, 1e6));
  CHECK(alone.chosen.time_s == 0.0);
  CHECK(alone.candidates.empty());
}

TEST_CASE("NCCL's latency details: whole tree levels, the proxy's post overhead on ring/LL across nodes") {
  // 3 nodes: log2i(3) = 1 level: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us, as for 2 nodes.
  auto three =
      model::estimate_collective(dgx(3), request(CollectiveOp::allreduce, 8, CollectiveAlgorithm::tree, Protocol::ll));
  CHECK(three.chosen.latency_s == doctest::Approx(25.2e-6).scale(1e-12));
  // Ring/LL on 2 nodes: 30 steps, the longest chain crosses ceil(30 / 8) = 4 times, each a network hop of 5.0 us
  // (LatencyTable): 6.6 + 26 x max(0.6, 1.0) + 4 x 5.0 = 52.6 us. (scale(1e-12): a relative check; doctest's default
  // Approx also passes anything within 1.2e-5 absolute, i.e. 12 us; scale(1e-12) leaves 1e-17.)
  auto ring =
      model::estimate_collective(dgx(2), request(CollectiveOp::allreduce, 8, CollectiveAlgorithm::ring, Protocol::ll));
  CHECK(ring.chosen.latency_s == doctest::Approx(52.6e-6).scale(1e-12));
  // NCCL broadcasts by ring only.
  for (const auto& candidate : model::estimate_collective(dgx(2), request(CollectiveOp::broadcast, 8)).candidates) {
    CHECK(candidate.algorithm == CollectiveAlgorithm::ring);
  }
}

TEST_CASE("NCCL picks by its tuner's count, the time follows the longest chain") {
  // 2 ranks on 2 nodes (g = 1): every step crosses, both counts agree: ring/LL all-reduce 6.6 + 2 x 5.0 = 16.6 us
  // (NCCL's tuner: 6.6 + 2 x 2.7 = 12.0 us, and it picks ring over the tree's 6.8 + 2 x 5.0 = 16.8 us).
  auto pair = model::estimate_collective(dgx(2, {0, 8}), request(CollectiveOp::allreduce, 8));
  CHECK(pair.chosen.algorithm == CollectiveAlgorithm::ring);
  CHECK(pair.chosen.protocol == Protocol::ll);
  CHECK(pair.chosen.latency_s == doctest::Approx(16.6e-6).scale(1e-12));
  // All-gather of 1 KiB on 16 ranks: 15 steps, ceil(15 / 8) = 2 cross (NCCL counts 1): 6.6 + 13 x max(0.6, 1)
  // + 2 x 5.0 = 29.6 us. The pick is still ring/LL, the one NCCL's count and figure make fastest.
  auto gather = model::estimate_collective(dgx(2), request(CollectiveOp::allgather, 1024));
  CHECK(gather.chosen.algorithm == CollectiveAlgorithm::ring);
  CHECK(gather.chosen.protocol == Protocol::ll);
  CHECK(gather.chosen.latency_s == doctest::Approx(29.6e-6).scale(1e-12));
}
