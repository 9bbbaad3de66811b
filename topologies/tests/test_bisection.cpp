// Bisection bandwidth (max-flow between the first and second half of the GPUs), worked out by hand.
#include <doctest/doctest.h>

#include "small_clusters.hpp"

using namespace treering::topologies;
using namespace treering::topologies::testing;

TEST_CASE("inside an NVSwitch node the cut is the second half's switch ports") {
  // GPUs {0,1} vs {2,3}; each GPU port 100 GB/s: 2 x 100 = 200 GB/s.
  Topology topology = build(cluster_head("one") + "nodes:\n" + nvswitch_group(1, 4, 0));
  CHECK(topology.bisection_bandwidth_Bps() == doctest::Approx(200e9).scale(1e-12));
}

TEST_CASE("in a full mesh the cut is the links between the halves") {
  // Pairs 0-2, 0-3, 1-2, 1-3 cross: 4 x 64 GB/s = 256 GB/s.
  Topology topology = build(cluster_head("mesh") +
                            "nodes:\n  - name: m\n    count: 1\n    gpu: G\n    gpus_per_node: 4\n"
                            "    fabric: {type: mesh, link_bandwidth: 64GB/s, latency: 0.8us}\n");
  CHECK(topology.bisection_bandwidth_Bps() == doctest::Approx(256e9).scale(1e-12));
}

TEST_CASE("between two nodes the cut is the first node's NICs") {
  // Node 0 vs node 1; 2 NICs of 25 GB/s each: 50 GB/s.
  Topology topology = build(cluster_head("two") + "nodes:\n" + nvswitch_group(2, 4, 2) +
                            "network: {topology: single-switch, hop_latency: 0.5us}\n");
  CHECK(topology.bisection_bandwidth_Bps() == doctest::Approx(50e9).scale(1e-12));
}

TEST_CASE("an oversubscribed fat-tree has less bisection than its NICs") {
  // 12 one-NIC nodes (12.5 GB/s), R = 8, o = 3: leaves of 6 ports with 2 uplinks of 12.5 GB/s.
  // Halves = leaf 0 vs leaf 1: 2 x 12.5 = 25 GB/s, a third of the 6 x 12.5 = 75 GB/s the NICs could send.
  Topology topology =
      build(cluster_head("over") +
            "nodes:\n  - name: n\n    count: 12\n    gpu: G\n    gpus_per_node: 1\n"
            "    fabric: {type: nvswitch, bandwidth: 100GB/s, latency: 1us}\n"
            "    nics: {count: 1, bandwidth: 100Gb/s, latency: 1us}\n"
            "network: {topology: fat-tree, switch_radix: 8, oversubscription: 3, hop_latency: 0.1us}\n");
  CHECK(topology.bisection_bandwidth_Bps() == doctest::Approx(25e9).scale(1e-12));
}

TEST_CASE("one GPU has no bisection") {
  Topology topology = build(cluster_head("single") + "nodes:\n" + nvswitch_group(1, 1, 0));
  CHECK(topology.bisection_bandwidth_Bps() == 0.0);
}

TEST_CASE("dgx-h100 at 16 nodes: 8 nodes x 8 NICs x 50 GB/s = 3.2 TB/s on a non-blocking fabric") {
  Topology topology(load_cluster("dgx-h100"));
  CHECK(topology.bisection_bandwidth_Bps() == doctest::Approx(3.2e12).scale(1e-12));
}
