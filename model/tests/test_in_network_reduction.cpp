// All-reduce reduced in the network's switches (InfiniBand SHARP: NCCL's CollNet Direct and Chain, and NVLS
// across nodes), on hand-derived cases. Constants: NCCL 2.30.7 src/graph/tuning.cc (microseconds, Simple):
// NVLS NVLink 25 / network 18; CollNet Direct 3.7 / 31 plus 0.4 a GPU; CollNet Chain 2.8 / 30; tree network 14.
// Rates of the dgx-h100 preset: NVSwitch ring bus 0.80 x 450 = 360 GB/s, in-switch 0.60 x 450 = 270 GB/s,
// 8 NICs x 0.92 x 50 = 368 GB/s a node.
#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "treering/model/collective_flows.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::Protocol;

namespace {

constexpr double kGiB = 1073741824.0;

topologies::Topology cluster(const std::string& name, int nodes, bool sharp, std::optional<int> gpus_per_node = {}) {
  return topologies::build_topology(
      name, {nodes, gpus_per_node, {{"network.in_network_reduction", sharp ? "true" : "false"}}});
}

model::CollectiveEstimate all_reduce(const model::CommGroup& group, double bytes,
                                     std::optional<CollectiveAlgorithm> algorithm = {}) {
  model::CollectiveRequest request;
  request.bytes = bytes;
  request.algorithm = algorithm;
  return model::estimate_collective(group, request);
}

}  // namespace

TEST_CASE("without in-network reduction NCCL has no CollNet and no NVLS across nodes") {
  const model::CommGroup group = model::describe_group(cluster("dgx-h100", 2, false));
  CHECK_FALSE(group.in_network_reduction);
  for (CollectiveAlgorithm algorithm :
       {CollectiveAlgorithm::nvls, CollectiveAlgorithm::collnet_direct, CollectiveAlgorithm::collnet_chain}) {
    CHECK_THROWS_AS(all_reduce(group, 8, algorithm), std::invalid_argument);
  }
  // One node never uses the network: the flag changes nothing there.
  CHECK_FALSE(model::describe_group(cluster("dgx-h100", 1, true)).in_network_reduction);
}

TEST_CASE("2 x DGX H100 with SHARP: NCCL's latencies, and the tree still wins at 8 B") {
  const model::CommGroup group = model::describe_group(cluster("dgx-h100", 2, true));
  REQUIRE(group.in_network_reduction);
  // NVLS across nodes: 25 + 18 = 43 us; 8 B at the in-switch rate (the slower of it and the NICs').
  const auto nvls = all_reduce(group, 8, CollectiveAlgorithm::nvls).chosen;
  CHECK(nvls.protocol == Protocol::simple);
  CHECK(nvls.latency_s == doctest::Approx(43e-6).scale(1e-12));
  CHECK(nvls.transfer_s == doctest::Approx(8 / 270e9).scale(1e-18));
  // CollNet Direct: 2 x (min(1, 7) x 3.7 + 7 x 0.4) + 31 = 44.0 us; Chain: 2 x 7 x 2.8 + 30 = 69.2 us.
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::collnet_direct).chosen.latency_s ==
        doctest::Approx(44.0e-6).scale(1e-12));
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::collnet_chain).chosen.latency_s ==
        doctest::Approx(69.2e-6).scale(1e-12));
  // The tree's 6.8 + 2 x (7 x 0.6 + 5.0) = 25.2 us stays NCCL's pick for small messages on two nodes.
  CHECK(all_reduce(group, 8).chosen.algorithm == CollectiveAlgorithm::tree);
}

TEST_CASE("1 GiB with SHARP: NVLS bound by the in-switch rate, CollNet Direct by NVLink") {
  const model::CommGroup group = model::describe_group(cluster("dgx-h100", 2, true));
  const auto estimate = all_reduce(group, kGiB);
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::nvls);
  // 43 us + the chunk pipeline's fill + 1 GiB / 270 GB/s (the NICs would take 1 GiB / 368 GB/s = 2.918 ms). Fill:
  // 16 NVLS channels x 8 GPUs = 128 pipes; 1 GiB is not under 64 x 128 x 128 KiB (= 1 GiB), so 128 KiB chunks;
  // 3 stages after the first x 128 KiB x 128 / 270 GB/s = 186.4 us. In all 4.206 ms, under NVLS-tree's.
  const double fill_s = 3 * 131072.0 * 128 / 270e9;
  CHECK(estimate.chosen.time_s == doctest::Approx(43e-6 + fill_s + kGiB / 270e9).scale(1e-12));
  CHECK(estimate.chosen.time_s < all_reduce(group, kGiB, CollectiveAlgorithm::nvls_tree).chosen.time_s);
  CHECK(estimate.scale_out_bytes_per_gpu == doctest::Approx(kGiB / 8).scale(1e-12));
  // Direct: each GPU moves 2 x 7/8 x S over its NVSwitch port (360 GB/s): 5.22 ms, over the NICs' 2.92 ms.
  const auto direct = all_reduce(group, kGiB, CollectiveAlgorithm::collnet_direct).chosen;
  CHECK(direct.transfer_s == doctest::Approx(1.75 * kGiB / 360e9).scale(1e-12));
}

TEST_CASE("the switches reduce: the cost does not grow with the number of nodes") {
  // 16 nodes: the tree's latency grows to 6.8 + 2 x (7 x 0.6 + 4 x 5.0) = 55.2 us; NVLS with SHARP stays at 43 us
  // and is picked for a decode-sized all-reduce. Its fill at 32 KiB: a pipe's share, 32 KiB / 128 pipes = 256 B, is
  // under NVLS's 16 KiB chunk, so 3 x 256 B x 128 / 270 GB/s = 3 x 32 KiB / 270 GB/s.
  const model::CommGroup group = model::describe_group(cluster("dgx-h100", 16, true));
  const auto estimate = all_reduce(group, 32768);
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::nvls);
  CHECK(estimate.chosen.latency_s == doctest::Approx(43e-6 + 3 * 32768 / 270e9).scale(1e-12));
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::tree).chosen.latency_s == doctest::Approx(55.2e-6).scale(1e-12));
}

TEST_CASE("NVLS across nodes needs 2 GPUs a node (NCCL turns NVLS off below)") {
  const model::CommGroup group = model::describe_group(cluster("dgx-h100", 2, true, 1));
  CHECK_THROWS_AS(all_reduce(group, 8, CollectiveAlgorithm::nvls), std::invalid_argument);
  // CollNet still runs there: Direct 2 x (0 x 3.7 + 0 x 0.4) + 14 us (the tree's network figure at one GPU a node).
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::collnet_direct).chosen.latency_s ==
        doctest::Approx(14e-6).scale(1e-12));
}

TEST_CASE("one GPU a node: CollNet takes the tree's network figure, and no NVLS without in-switch reduction") {
  // 2 x 1 A100: Chain 2 x 0 x 2.8 + 14 = 14 us; Direct 2 x (min(1, 0) x 3.7 + 0 x 0.4) + 14 = 14 us.
  const model::CommGroup group = model::describe_group(cluster("dgx-a100", 2, true, 1));
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::collnet_chain).chosen.latency_s ==
        doctest::Approx(14e-6).scale(1e-12));
  CHECK(all_reduce(group, 8, CollectiveAlgorithm::collnet_direct).chosen.latency_s ==
        doctest::Approx(14e-6).scale(1e-12));
  CHECK_THROWS_AS(all_reduce(group, 8, CollectiveAlgorithm::nvls), std::invalid_argument);
}

TEST_CASE("SHARP flows: bytes per tier are the model's, and alone each part takes the model's time") {
  const topologies::Topology topology = cluster("dgx-h100", 2, true);
  const model::CommGroup group = model::describe_group(topology);
  std::vector<int> domains;
  for (int gpu : group.gpus) domains.push_back(topology.domain_of_gpu(gpu));
  const double S = 1 << 20;
  for (CollectiveAlgorithm algorithm :
       {CollectiveAlgorithm::nvls, CollectiveAlgorithm::collnet_direct, CollectiveAlgorithm::collnet_chain}) {
    CAPTURE(model::to_string(algorithm));
    const auto estimate = all_reduce(group, S, algorithm);
    const auto schedule = model::collective_schedule(group, domains, CollectiveOp::allreduce, S, estimate.chosen);
    double intra = 0, inter = 0;
    for (const auto& flow : schedule.flows) {
      const bool across = domains[static_cast<size_t>(flow.from)] != domains[static_cast<size_t>(flow.to)];
      (across ? inter : intra) += flow.bytes;
      // A rail flow carries S / 8 through one NIC (46 GB/s) in the model's S / 368 GB/s.
      if (across) CHECK(flow.wire_bytes / 46e9 == doctest::Approx(S / 368e9).scale(1e-15));
    }
    CHECK(intra == doctest::Approx(estimate.scale_up_bytes_per_gpu * 16).scale(1e-9));
    CHECK(inter == doctest::Approx(16 * S / 8).scale(1e-9));
  }
}

TEST_CASE("which algorithms reduce in the network: CollNet always, NVLS only across domains") {
  CHECK(model::reduces_in_network(CollectiveAlgorithm::collnet_direct, 2));
  CHECK(model::reduces_in_network(CollectiveAlgorithm::collnet_chain, 4));
  CHECK(model::reduces_in_network(CollectiveAlgorithm::nvls, 2));
  CHECK_FALSE(model::reduces_in_network(CollectiveAlgorithm::nvls, 1));  // in the NVSwitch only
  CHECK_FALSE(model::reduces_in_network(CollectiveAlgorithm::nvls_tree, 2));
  CHECK_FALSE(model::reduces_in_network(CollectiveAlgorithm::tree, 2));
}
