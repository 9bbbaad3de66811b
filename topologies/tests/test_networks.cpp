// Scale-out networks: sizes, D-mod-k spine choice, rails, capacity errors. Port arithmetic by hand:
// radix R, oversubscription o -> d = floor(R*o/(1+o)) down, u = R - d up per leaf.
#include <doctest/doctest.h>

#include "small_clusters.hpp"
#include "treering/topologies/summary.hpp"

using namespace treering::topologies;
using namespace treering::topologies::testing;

namespace {

// `nodes` nodes of one GPU with one NIC of 100 Gb/s (12.5 GB/s) / 1 us.
std::string one_gpu_nodes(int nodes, const std::string& network) {
  return cluster_head("net") + "nodes:\n  - name: n\n    count: " + std::to_string(nodes) +
         "\n    gpu: G\n    gpus_per_node: 1\n    fabric: {type: nvswitch, bandwidth: 100GB/s, latency: 1us}\n"
         "    nics: {count: 1, bandwidth: 100Gb/s, latency: 1us}\nnetwork: " +
         network + "\n";
}

int count_switches(const Topology& topology, int level) {
  int count = 0;
  for (DeviceId id = 0; id < topology.device_count(); ++id) {
    const Device& device = topology.device(id);
    if (device.kind == DeviceKind::network_switch && device.level == level) ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("2-level fat-tree: leaves of d ports, u spines, D-mod-k spine by destination port") {
  // R = 4, o = 1: d = 2, u = 2. 4 NIC ports -> 2 leaves, 2 spines.
  Topology topology = build(one_gpu_nodes(4, "{topology: fat-tree, levels: 2, switch_radix: 4, hop_latency: 0.1us}"));
  CHECK(count_switches(topology, 1) == 2);
  CHECK(count_switches(topology, 2) == 2);
  CHECK(path_of(topology, topology.route(0, 1)) == "n-0/gpu0 > n-0/nic0 > leaf0 > n-1/nic0 > n-1/gpu0");
  // Destination address (leaf ordinal * d + position) = port here: port 2 -> spine 2 mod 2 = 0; port 3 -> 1.
  Route to_two = topology.route(0, 2);
  CHECK(path_of(topology, to_two) == "n-0/gpu0 > n-0/nic0 > leaf0 > spine0 > leaf1 > n-2/nic0 > n-2/gpu0");
  CHECK(path_of(topology, topology.route(0, 3)) ==
        "n-0/gpu0 > n-0/nic0 > leaf0 > spine1 > leaf1 > n-3/nic0 > n-3/gpu0");
  CHECK(to_two.latency_s == doctest::Approx(2.3e-6).scale(1e-12));  // NIC 1 + 3 switches x 0.1 + NIC 1
}

TEST_CASE("oversubscription changes the leaf's port split") {
  // R = 8, o = 3: d = floor(24/4) = 6, u = 2. 12 ports -> 2 leaves of 6, 2 spines.
  Topology topology =
      build(one_gpu_nodes(12, "{topology: fat-tree, switch_radix: 8, oversubscription: 3, hop_latency: 0.1us}"));
  CHECK(count_switches(topology, 1) == 2);
  CHECK(count_switches(topology, 2) == 2);
  CHECK(topology.route(0, 5).links.size() == 4);  // ports 0 and 5 share leaf 0
  CHECK(topology.route(0, 6).links.size() == 6);  // port 6 is on leaf 1
}

TEST_CASE("3-level fat-tree: pods of R/2 leaves, u aggregation switches, u core groups of R/2") {
  // R = 4: d = u = 2, 2 leaves per pod. 8 ports -> 4 leaves -> 2 pods, 2 x 2 aggregation, 2 x 2 cores.
  Topology topology = build(one_gpu_nodes(8, "{topology: fat-tree, levels: 3, switch_radix: 4, hop_latency: 0.1us}"));
  CHECK(count_switches(topology, 1) == 4);
  CHECK(count_switches(topology, 2) == 4);
  CHECK(count_switches(topology, 3) == 4);
  CHECK(path_of(topology, topology.route(0, 2)) ==
        "n-0/gpu0 > n-0/nic0 > leaf0 > pod0/agg0 > leaf1 > n-2/nic0 > n-2/gpu0");
  // D-mod-k on the destination address (port): port 4: aggregation 4 mod 2 = 0, then 4 / 2 = 2, core
  // 2 mod 2 = 0 of group 0. Port 5: aggregation 5 mod 2 = 1, then 5 / 2 = 2, core 0 of group 1.
  CHECK(path_of(topology, topology.route(0, 4)) ==
        "n-0/gpu0 > n-0/nic0 > leaf0 > pod0/agg0 > core0.0 > pod1/agg0 > leaf2 > n-4/nic0 > n-4/gpu0");
  CHECK(path_of(topology, topology.route(0, 5)) ==
        "n-0/gpu0 > n-0/nic0 > leaf0 > pod0/agg1 > core1.0 > pod1/agg1 > leaf2 > n-5/nic0 > n-5/gpu0");
}

TEST_CASE("rail-optimized: same-rail traffic crosses one switch, cross-rail goes through a spine") {
  // 2 nodes x 2 GPUs x 2 NICs, R = 4: d = 2 nodes per leaf, 1 block x 2 rails = 2 leaves, u = 2 spines.
  Topology topology = build(cluster_head("rails") +
                            "nodes:\n  - name: n\n    count: 2\n    gpu: G\n    gpus_per_node: 2\n"
                            "    fabric: {type: nvswitch, bandwidth: 100GB/s, latency: 1us}\n"
                            "    nics: {count: 2, bandwidth: 100Gb/s, latency: 1us}\n"
                            "network: {topology: rail-optimized, switch_radix: 4, hop_latency: 0.1us}\n");
  CHECK(path_of(topology, topology.route(0, 2)) == "n-0/gpu0 > n-0/nic0 > rail0/leaf0 > n-1/nic0 > n-1/gpu0");
  // GPU 3 = node 1 GPU 1 on NIC 1, on leaf rail1/leaf0 (ordinal 1) at position 1: address 1 * 2 + 1 = 3,
  // spine 3 mod 2 = 1.
  CHECK(path_of(topology, topology.route(0, 3)) ==
        "n-0/gpu0 > n-0/nic0 > rail0/leaf0 > spine1 > rail1/leaf0 > n-1/nic1 > n-1/gpu1");
}

TEST_CASE("a network too small for its NICs is an error at the network") {
  // 2-level, R = 4: at most 4 leaves x 2 = 8 ports.
  CHECK_THROWS_WITH_AS(build(one_gpu_nodes(9, "{topology: fat-tree, switch_radix: 4, hop_latency: 0.1us}")),
                       "test.yaml:15:10: error: the network is too small: a 2-level fat-tree of 4-port switches "
                       "connects at most 8 NIC ports, the cluster has 9 (use more levels, larger switches or less "
                       "oversubscription)",
                       InputError);
  // 3-level, R = 4: 4 pods x 2 leaves x 2 = 16 ports.
  CHECK_NOTHROW(build(one_gpu_nodes(16, "{topology: fat-tree, levels: 3, switch_radix: 4, hop_latency: 0.1us}")));
  CHECK_THROWS_AS(build(one_gpu_nodes(17, "{topology: fat-tree, levels: 3, switch_radix: 4, hop_latency: 0.1us}")),
                  InputError);
}

TEST_CASE("several scale-up domains without a network section is an error") {
  CHECK_THROWS_WITH_AS(build(cluster_head("no-net") + "nodes:\n" + nvswitch_group(2, 4, 1)),
                       "test.yaml:1:1: error: the cluster has 2 scale-up domains but no 'network' section to connect "
                       "them",
                       InputError);
}

TEST_CASE("levels: auto takes 2 levels while the leaves fit under one spine layer, 3 beyond") {
  // R = 4, d = 2. 8 ports -> 4 leaves <= R: 2 spines, no cores.
  Topology small = build(one_gpu_nodes(8, "{topology: fat-tree, levels: auto, switch_radix: 4, hop_latency: 0.1us}"));
  CHECK(count_switches(small, 2) == 2);
  CHECK(count_switches(small, 3) == 0);
  // 9 ports -> 5 leaves > R: ceil(5 / 2) = 3 pods x 2 aggregation switches, 2 core groups x 2 cores.
  Topology large = build(one_gpu_nodes(9, "{topology: fat-tree, levels: auto, switch_radix: 4, hop_latency: 0.1us}"));
  CHECK(count_switches(large, 2) == 6);
  CHECK(count_switches(large, 3) == 4);
}

TEST_CASE("a 3-level rail-optimized network: pods of whole blocks of rail leaves") {
  // 4 nodes x 2 NICs, R = 4, d = 2: 2 blocks x 2 rails = 4 leaves, pods of 2 leaves = one block each.
  Topology topology = build(cluster_head("rails3") +
                            "nodes:\n  - name: n\n    count: 4\n    gpu: G\n    gpus_per_node: 2\n"
                            "    fabric: {type: nvswitch, bandwidth: 100GB/s, latency: 1us}\n"
                            "    nics: {count: 2, bandwidth: 100Gb/s, latency: 1us}\n"
                            "network: {topology: rail-optimized, levels: 3, switch_radix: 4, hop_latency: 0.1us}\n");
  CHECK(path_of(topology, topology.route(0, 2)) == "n-0/gpu0 > n-0/nic0 > rail0/leaf0 > n-1/nic0 > n-1/gpu0");
  // Node 2 is in block 1 (pod 1): up through an aggregation switch and a core. Destination address: leaf
  // rail0/leaf1 is leaf ordinal 2 (leaves go block by block, rail by rail), node 2 is position 0 on it:
  // 2 * d + 0 = 4 -> aggregation 4 mod 2 = 0, then 4 / 2 = 2 -> core 2 mod 2 = 0.
  CHECK(path_of(topology, topology.route(0, 4)) ==
        "n-0/gpu0 > n-0/nic0 > rail0/leaf0 > pod0/agg0 > core0.0 > pod1/agg0 > rail0/leaf1 > n-2/nic0 > n-2/gpu0");
}

namespace {

// Routes GPU g -> GPU (g + shift) mod P for every g and returns the most routes that share one directed
// link of the scale-out network.
int most_routes_on_one_network_link(const Topology& topology, int shift) {
  std::vector<int> routes_on(static_cast<size_t>(topology.link_count()), 0);
  int most = 0;
  for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    for (LinkId id : topology.route(gpu, (gpu + shift) % topology.gpu_count()).links) {
      const Link& link = topology.link(id);
      bool between_switches = topology.device(link.from).kind == DeviceKind::network_switch &&
                              topology.device(link.to).kind == DeviceKind::network_switch;
      if (between_switches) most = std::max(most, ++routes_on[static_cast<size_t>(id)]);
    }
  }
  return most;
}

}  // namespace

TEST_CASE("D-mod-k spreads a shift permutation over a non-blocking fabric: no switch link carries two routes") {
  // Every GPU sends to the same rail 32 nodes on (dgx-h100, 64 nodes: two blocks of 32 nodes, 2 levels):
  // each rail leaf sends 32 routes up, one per spine.
  ClusterSpec two_levels = load_cluster("dgx-h100");
  apply_overrides(two_levels, {64, std::nullopt});
  CHECK(most_routes_on_one_network_link(Topology(two_levels), 32 * 8) == 1);
  // 3 levels (dgx-h100, 512 nodes = 4096 GPUs): every GPU to the one 256 nodes on, through the cores.
  ClusterSpec three_levels = load_cluster("dgx-h100");
  apply_overrides(three_levels, {512, std::nullopt});
  CHECK(most_routes_on_one_network_link(Topology(three_levels), 256 * 8) == 1);
  // A plain 2-level fat-tree (mi300x, 64 nodes): shift by half the GPUs.
  ClusterSpec fat_tree = load_cluster("mi300x");
  apply_overrides(fat_tree, {64, std::nullopt});
  CHECK(most_routes_on_one_network_link(Topology(fat_tree), 256) == 1);
}

TEST_CASE("a fractional oversubscription splits the ports exactly") {
  // R = 48, o = 1.4: d = 48 * 1.4 / 2.4 = 28 exactly (not 27 from rounding). 28 ports fit on one leaf.
  Topology topology =
      build(one_gpu_nodes(28, "{topology: fat-tree, switch_radix: 48, oversubscription: 1.4, hop_latency: 0.1us}"));
  CHECK(count_switches(topology, 1) == 1);
  CHECK(count_switches(topology, 2) == 0);
}

TEST_CASE("in_network_reduction: off by default, read when given, and named in the summary") {
  const ClusterSpec plain =
      load_cluster_text(one_gpu_nodes(2, "{topology: single-switch, hop_latency: 0.1us}"), "plain.yaml");
  CHECK_FALSE(plain.network.in_network_reduction);
  const ClusterSpec sharp = load_cluster_text(
      one_gpu_nodes(2, "{topology: single-switch, hop_latency: 0.1us, in_network_reduction: true}"), "sharp.yaml");
  CHECK(sharp.network.in_network_reduction);
  CHECK(summarize(Topology(sharp)).network == "single-switch, 100 ns per hop, in-network reduction (SHARP)");
  CHECK(summarize(Topology(plain)).network == "single-switch, 100 ns per hop");
  // The DGX presets carry the key, off, so that --set can turn it on.
  CHECK_FALSE(load_cluster("dgx-h100").network.in_network_reduction);
  CHECK(build_topology("dgx-h100", {2, {}, {{"network.in_network_reduction", "true"}}})
            .spec()
            .network.in_network_reduction);
}
