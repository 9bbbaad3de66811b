// Routes, hop tiers, latencies and bottlenecks on small hand-made clusters.
#include <doctest/doctest.h>

#include "small_clusters.hpp"
#include "treering/topologies/summary.hpp"

using namespace treering::topologies;
using namespace treering::topologies::testing;

namespace {

// 2 nodes x 4 GPUs, NVSwitch 100 GB/s / 1 us, 2 NICs of 25 GB/s / 2 us per node (GPUs 0,1 -> NIC 0;
// 2,3 -> NIC 1), one switch with 0.5 us per hop.
const std::string kTwoNvswitchNodes = cluster_head("two") + "nodes:\n" + nvswitch_group(2, 4, 2) +
                                      "network: {topology: single-switch, hop_latency: 0.5us}\n";

std::string pcie_cluster(bool p2p, int nodes) {
  std::string text = cluster_head("pcie") + "nodes:\n  - name: box\n    count: " + std::to_string(nodes) +
                     "\n    gpu: G\n    gpus_per_node: 4\n"
                     "    fabric: {type: pcie, bandwidth: 32GB/s, host_bandwidth: 16GB/s, latency: 0.3us, switches: 2, "
                     "p2p: " +
                     (p2p ? "true" : "false") + "}\n";
  if (nodes > 1) {
    text +=
        "    nics: {count: 1, bandwidth: 100Gb/s, latency: 1us}\n"
        "network: {topology: single-switch, hop_latency: 0.5us}\n";
  }
  return text;
}

}  // namespace

TEST_CASE("NVSwitch: GPU -> switch -> GPU inside a node") {
  Topology topology = build(kTwoNvswitchNodes);
  Route route = topology.route(0, 1);
  CHECK(path_of(topology, route) == "box-0/gpu0 > box-0/nvswitch > box-0/gpu1");
  CHECK(route.latency_s == doctest::Approx(1e-6).scale(1e-12));        // the switch's 1 us
  CHECK(route.bottleneck_Bps == doctest::Approx(100e9).scale(1e-12));  // the GPU's NVSwitch port
  for (LinkId id : route.links) CHECK(topology.link(id).tier == Tier::scale_up);
}

TEST_CASE("between nodes: GPU -> its NIC -> switch -> NIC -> GPU, all scale-out") {
  Topology topology = build(kTwoNvswitchNodes);
  Route route = topology.route(0, 4);
  CHECK(path_of(topology, route) == "box-0/gpu0 > box-0/nic0 > switch > box-1/nic0 > box-1/gpu0");
  CHECK(route.latency_s == doctest::Approx(4.5e-6).scale(1e-12));     // NIC 2 + switch 0.5 + NIC 2
  CHECK(route.bottleneck_Bps == doctest::Approx(25e9).scale(1e-12));  // 200 Gb/s
  for (LinkId id : route.links) CHECK(topology.link(id).tier == Tier::scale_out);
  // GPU 3 uses NIC 1 (blocks: 4 GPUs over 2 NICs), and so does GPU 6 (local GPU 2).
  CHECK(path_of(topology, topology.route(3, 6)) == "box-0/gpu3 > box-0/nic1 > switch > box-1/nic1 > box-1/gpu2");
}

TEST_CASE("routes are deterministic and the reverse route mirrors the forward one") {
  Topology topology = build(kTwoNvswitchNodes);
  Route forward = topology.route(1, 7);
  Route again = topology.route(1, 7);
  CHECK(forward.links == again.links);
  Route backward = topology.route(7, 1);
  REQUIRE(backward.links.size() == forward.links.size());
  for (size_t i = 0; i < forward.links.size(); ++i) {
    CHECK(topology.link(forward.links[i]).reverse == backward.links[forward.links.size() - 1 - i]);
  }
}

TEST_CASE("a route to itself is empty; GPU indices are checked") {
  Topology topology = build(kTwoNvswitchNodes);
  CHECK(topology.route(2, 2).links.empty());
  CHECK(topology.route(2, 2).latency_s == 0.0);
  CHECK_THROWS_AS(topology.route(0, 8), std::out_of_range);
  CHECK_THROWS_AS(topology.route(-1, 0), std::out_of_range);
}

TEST_CASE("mesh: one direct link per pair carrying links_per_peer links") {
  Topology topology = build(cluster_head("mesh") +
                            "nodes:\n  - name: m\n    count: 1\n    gpu: G\n    gpus_per_node: 4\n"
                            "    fabric: {type: mesh, link_bandwidth: 64GB/s, links_per_peer: 2, latency: 0.8us}\n");
  Route route = topology.route(0, 3);
  CHECK(path_of(topology, route) == "m-0/gpu0 > m-0/gpu3");
  CHECK(route.latency_s == doctest::Approx(0.8e-6).scale(1e-12));
  CHECK(route.bottleneck_Bps == doctest::Approx(128e9).scale(1e-12));  // 2 x 64 GB/s
  // 4 GPUs: 6 pairs = 6 cables = 12 directed links.
  CHECK(topology.link_count() == 12);
}

TEST_CASE("PCIe with P2P: direct under one switch, through the host bridge across switches") {
  Topology topology = build(pcie_cluster(true, 1));
  Route same_switch = topology.route(0, 1);
  CHECK(path_of(topology, same_switch) == "box-0/gpu0 > box-0/pcie0 > box-0/gpu1");
  CHECK(same_switch.latency_s == doctest::Approx(0.3e-6).scale(1e-12));
  CHECK(same_switch.bottleneck_Bps == doctest::Approx(32e9).scale(1e-12));
  Route across = topology.route(0, 2);
  CHECK(path_of(topology, across) == "box-0/gpu0 > box-0/pcie0 > box-0/host > box-0/pcie1 > box-0/gpu2");
  CHECK(across.latency_s == doctest::Approx(0.9e-6).scale(1e-12));     // switch + host + switch, 0.3 us each
  CHECK(across.bottleneck_Bps == doctest::Approx(16e9).scale(1e-12));  // the switch uplink
}

TEST_CASE("PCIe without P2P: every transfer is staged through the host bridge") {
  Topology topology = build(pcie_cluster(false, 1));
  Route route = topology.route(0, 1);
  CHECK(path_of(topology, route) == "box-0/gpu0 > box-0/pcie0 > box-0/host > box-0/pcie0 > box-0/gpu1");
  CHECK(route.latency_s == doctest::Approx(0.9e-6).scale(1e-12));
  CHECK(route.bottleneck_Bps == doctest::Approx(16e9).scale(1e-12));
}

TEST_CASE("PCIe nodes reach their NIC through the host bridge") {
  Topology topology = build(pcie_cluster(false, 2));
  Route route = topology.route(0, 4);
  CHECK(path_of(topology, route) ==
        "box-0/gpu0 > box-0/pcie0 > box-0/host > box-0/nic0 > switch > box-1/nic0 > box-1/host > box-1/pcie0 > "
        "box-1/gpu0");
  // pcie 0.3 + host 0.3 + NIC 1 + switch 0.5 + NIC 1 + host 0.3 + pcie 0.3 = 3.7 us
  CHECK(route.latency_s == doctest::Approx(3.7e-6).scale(1e-12));
  CHECK(route.bottleneck_Bps == doctest::Approx(12.5e9).scale(1e-12));  // 100 Gb/s
  CHECK(topology.link(route.links[0]).tier == Tier::scale_up);
  CHECK(topology.link(route.links[2]).tier == Tier::scale_out);  // host -> NIC
}

TEST_CASE("a multi-node NVLink domain routes through its one switch, not the network") {
  Topology topology = build(cluster_head("nvl") +
                            "nodes:\n  - name: tray\n    count: 4\n    gpu: G\n    gpus_per_node: 4\n"
                            "    fabric: {type: nvswitch, bandwidth: 900GB/s, latency: 1us, domain_nodes: 2}\n"
                            "    nics: {count: 4, bandwidth: 400Gb/s, latency: 2us}\n"
                            "network: {topology: single-switch, hop_latency: 0.5us}\n");
  CHECK(topology.domain_count() == 2);  // trays 0-1 and 2-3
  CHECK(path_of(topology, topology.route(0, 7)) == "tray-0/gpu0 > tray-domain0/nvswitch > tray-1/gpu3");
  CHECK(topology.route(0, 8).links.size() == 4);  // other domain: through NICs and the switch
}

TEST_CASE("the summary's farthest route is the slowest one from GPU 0") {
  // dgx-h100, 2 nodes: to GPU 8 (same rail) 4 links, 1 + 0.13 + 1 = 2.13 us; to GPUs 9-15 (other rails)
  // through a spine: 6 links, 1 + 3 x 0.13 + 1 = 2.39 us. Ties go to the lowest index: GPU 9.
  ClusterSpec spec = load_cluster("dgx-h100");
  apply_overrides(spec, {2, std::nullopt});
  ClusterSummary summary = summarize(Topology(spec));
  REQUIRE(summary.farthest_route.has_value());
  CHECK(summary.farthest_route->to == "dgx-h100-1/gpu1");
  CHECK(summary.farthest_route->hops == 6);
  CHECK(summary.farthest_route->latency_s == doctest::Approx(2.39e-6).scale(1e-12));
}

TEST_CASE("through NICs: an RDMA write leaves by the source's NIC even inside a node; a shared NIC loops back") {
  Topology topology = build(kTwoNvswitchNodes);
  // GPUs 0 and 2 are in one node on NICs 0 and 1: out through NIC 0, the switch, in through NIC 1; no NVSwitch.
  const Route across_nics = topology.route_through_nics(0, 2);
  CHECK(path_of(topology, across_nics) == "box-0/gpu0 > box-0/nic0 > switch > box-0/nic1 > box-0/gpu2");
  CHECK(across_nics.latency_s == doctest::Approx(4.5e-6).scale(1e-12));  // NIC 2 + switch 0.5 + NIC 2
  for (LinkId id : across_nics.links) CHECK(topology.link(id).tier == Tier::scale_out);
  // GPUs 0 and 1 share NIC 0: to it and back, no switch (the NIC's loopback); to itself likewise.
  CHECK(path_of(topology, topology.route_through_nics(0, 1)) == "box-0/gpu0 > box-0/nic0 > box-0/gpu1");
  CHECK(path_of(topology, topology.route_through_nics(0, 0)) == "box-0/gpu0 > box-0/nic0 > box-0/gpu0");
  // Across nodes it is the ordinary route.
  CHECK(topology.route_through_nics(1, 7).links == topology.route(1, 7).links);
  CHECK_THROWS_AS(topology.route_through_nics(0, 8), std::out_of_range);
}
