// Every preset loads, builds a connected graph and matches its file under topologies/clusters/.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"

namespace fs = std::filesystem;
using namespace treering::topologies;

TEST_CASE("the embedded presets are exactly the files in topologies/clusters") {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "topologies" / "clusters";
  std::vector<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() != ".yaml") continue;
    on_disk.push_back(entry.path().stem().string());
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    bool found = false;
    for (const Preset& preset : cluster_presets()) {
      if (preset.name == on_disk.back()) {
        found = true;
        CHECK(preset.yaml_text == text.str());
      }
    }
    CHECK_MESSAGE(found, entry.path().string());
  }
  CHECK(on_disk.size() == cluster_presets().size());
}

TEST_CASE("the issue's presets exist, are named as their files, and build") {
  for (const char* name : {"dgx-h100", "dgx-h200", "dgx-h800", "dgx-a100", "mi300x", "rtx4090-pcie", "gb200-nvl72"}) {
    CAPTURE(name);
    ClusterSpec spec = load_cluster(name);
    CHECK(spec.name == name);
    CHECK(!spec.description.empty());
    Topology topology(std::move(spec));
    CHECK(topology.gpu_count() > 0);
  }
}

TEST_CASE("preset shapes: GPUs, nodes and NVLink domains") {
  // dgx-h100: 16 nodes x 8 GPUs = 128 (the paper's largest run), one domain per node.
  Topology h100(load_cluster("dgx-h100"));
  CHECK(h100.gpu_count() == 128);
  CHECK(h100.node_count() == 16);
  CHECK(h100.domain_count() == 16);
  // gb200-nvl72: 18 trays x 4 GPUs = 72 in a single 18-tray NVLink domain.
  Topology nvl72(load_cluster("gb200-nvl72"));
  CHECK(nvl72.gpu_count() == 72);
  CHECK(nvl72.domain_count() == 1);
  CHECK(nvl72.route(0, 71).links.size() == 2);  // GPU -> NVSwitch -> GPU, even across trays
  // MI300X: 7 xGMI links of 64 GB/s per GPU, one per peer.
  ClusterSpec mi300x = load_cluster("mi300x");
  CHECK(mi300x.groups.front().fabric.type == FabricType::mesh);
  CHECK(mi300x.groups.front().fabric.link_bandwidth_Bps == doctest::Approx(64e9).scale(1e-12));
}

TEST_CASE("--nodes and --gpus-per-node overrides") {
  ClusterSpec spec = load_cluster("dgx-h100");
  apply_overrides(spec, {4, std::nullopt});
  CHECK(Topology(spec).gpu_count() == 32);  // 4 x 8

  ClusterSpec box = load_cluster("rtx4090-pcie");
  apply_overrides(box, {std::nullopt, 4});
  CHECK(Topology(box).gpu_count() == 4 * box.groups.front().count);

  ClusterSpec dgx = load_cluster("dgx-h100");
  CHECK_THROWS_WITH_AS(apply_overrides(dgx, {std::nullopt, 16}),
                       "error: --gpus-per-node 16 is outside 1-8 for node group 'dgx-h100'", InputError);
  CHECK_THROWS_WITH_AS(apply_overrides(dgx, {0, std::nullopt}), "error: --nodes must be at least 1, got 0", InputError);
}

TEST_CASE("--gpus-per-node on a node that maps GPUs to NICs keeps the first GPUs and their NICs") {
  // mi300x lists gpu_to_nic [0..7] (one NIC per GPU): 4 GPUs keep NICs 0-3.
  ClusterSpec mi300x = load_cluster("mi300x");
  apply_overrides(mi300x, {2, 4});
  const NodeGroup& group = mi300x.groups.front();
  CHECK(group.gpus_per_node == 4);
  CHECK(group.nics.count == 4);
  CHECK(group.nics.gpu_to_nic == std::vector<int>{0, 1, 2, 3});
  const Topology topology(mi300x);
  CHECK(topology.gpu_count() == 8);                 // 2 nodes x 4
  CHECK_FALSE(topology.route(0, 4).links.empty());  // GPU 0 of node 0 to GPU 0 of node 1, through the network

  // Two GPUs per NIC, [0, 0, 1, 1, 2, 2, 3, 3]: the first 3 GPUs use NICs 0 and 1.
  ClusterSpec shared = load_cluster("dgx-h100");
  shared.groups.front().nics.count = 4;
  shared.groups.front().nics.gpu_to_nic = {0, 0, 1, 1, 2, 2, 3, 3};
  apply_overrides(shared, {std::nullopt, 3});
  CHECK(shared.groups.front().nics.gpu_to_nic == std::vector<int>{0, 0, 1});
  CHECK(shared.groups.front().nics.count == 2);

  // A node that could hold more GPUs than its NIC map lists: the map bounds what can be chosen.
  ClusterSpec wide = load_cluster("dgx-h100");
  wide.groups.front().max_gpus_per_node = 16;
  CHECK_THROWS_WITH_AS(
      apply_overrides(wide, {std::nullopt, 9}),
      "error: --gpus-per-node 9: node group 'dgx-h100' maps 8 GPUs to NICs (gpu_to_nic); it can run on its "
      "first 1-8",
      InputError);
}

TEST_CASE("an unknown preset name lists the presets") {
  CHECK_THROWS_WITH_AS(load_cluster("dgx-h1000"),
                       "error: unknown cluster 'dgx-h1000' (presets: dgx-a100, dgx-h100, dgx-h200, dgx-h800, "
                       "gb200-nvl72, loopback-h100, "
                       "mi300x, polaris-a100, rtx4090-pcie; a file path must contain '/' or end in .yaml)",
                       InputError);
}

TEST_CASE("the example clusters in topologies/examples load and build") {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "topologies" / "examples";
  int examples = 0;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    ++examples;
    CHECK_NOTHROW(Topology(load_cluster_file(entry.path().string())));
  }
  CHECK(examples >= 3);
  // 4x the NIC bandwidth: the 16-node bisection grows from 3.2 to 4 x 3.2 = 12.8 TB/s.
  Topology faster(load_cluster_file((directory / "dgx-h100-4x-ib.yaml").string()));
  CHECK(faster.bisection_bandwidth_Bps() == doctest::Approx(12.8e12).scale(1e-12));
  // 18 nodes in NVLink domains of 9: 2 domains of 72 GPUs.
  Topology nvl(load_cluster_file((directory / "h100-nvl72.yaml").string()));
  CHECK(nvl.domain_count() == 2);
  CHECK(nvl.route(0, 71).links.size() == 2);
}

TEST_CASE("overrides cannot build past the size limits the loader enforces") {
  // 1048576 nodes x 8 GPUs = 8388608 GPUs > 2^20.
  ClusterSpec spec = load_cluster("dgx-h100");
  CHECK_THROWS_WITH_AS(apply_overrides(spec, {1048576, std::nullopt}),
                       "error: the cluster has 8388608 GPUs; at most 1048576 are supported", InputError);
  ClusterSpec fits = load_cluster("dgx-h100");
  CHECK_NOTHROW(apply_overrides(fits, {131072, std::nullopt}));  // 131072 x 8 = 2^20 exactly
}

TEST_CASE("loopback-h100: P virtual ranks share one GPU, 1/P of its figures and of the copy bandwidth each") {
  for (int ranks : {1, 4, 8}) {
    CAPTURE(ranks);
    const Topology topology = build_topology("loopback-h100", {std::nullopt, ranks, {}});
    const ClusterSpec& spec = topology.spec();
    const NodeGroup& group = spec.groups.front();
    const GpuModel& share = spec.gpu_models.at(group.gpu_model);
    CHECK(topology.gpu_count() == ranks);
    CHECK(group.shared_by == ranks);
    CHECK(share.hbm_bandwidth_Bps == doctest::Approx(3.35e12 / ranks).scale(1e-12));  // the file's 3.35TB/s
    CHECK(share.peak_fp16_flops == doctest::Approx(989e12 / ranks).scale(1e-12));
    CHECK(group.fabric.bandwidth_Bps ==
          doctest::Approx(1.49e12 / ranks).scale(1e-12));  // the file's 1.49TB/s device copy
    // A topology built again from this one's spec is not divided twice.
    const Topology again{ClusterSpec(spec)};
    CHECK(again.spec().gpu_models.at(again.spec().groups.front().gpu_model).hbm_bandwidth_Bps ==
          doctest::Approx(3.35e12 / ranks).scale(1e-12));
  }
  CHECK_THROWS_WITH_AS(load_cluster_text(R"(name: x
description: "y"
gpu_models:
  G: {hbm_bandwidth: 1TB/s, hbm_capacity: 1GB, peak_fp16: 1TFLOPS, launch_overhead: 1us}
nodes:
  - name: n
    count: 2
    gpu: G
    gpus_per_node: 2
    shared_device: true
    fabric: {type: nvswitch, bandwidth: 1GB/s, latency: 1us}
)",
                                         "two.yaml"),
                       doctest::Contains("two.yaml:7:12: error: a shared device is one GPU: count must be 1"),
                       InputError);
}

TEST_CASE("presets name their GPUs' architecture and, where nodes meet over a network, their host CPU") {
  // Datasheets and user guides cited in each file: DGX A100 has AMD EPYC 7742 hosts, DGX H100/H200 Intel Xeon
  // 8480C, a GB200 tray two Grace (Arm) CPUs.
  const struct {
    const char* preset;
    GpuArchitecture architecture;
    HostCpu host;
  } expected[] = {{"dgx-a100", GpuArchitecture::ampere, HostCpu::amd},
                  {"dgx-h100", GpuArchitecture::hopper, HostCpu::intel},
                  {"dgx-h200", GpuArchitecture::hopper, HostCpu::intel},
                  {"dgx-h800", GpuArchitecture::hopper, HostCpu::intel},
                  {"gb200-nvl72", GpuArchitecture::blackwell, HostCpu::arm},
                  {"mi300x", GpuArchitecture::cdna3, HostCpu::unknown},
                  {"rtx4090-pcie", GpuArchitecture::ada, HostCpu::unknown},
                  {"loopback-h100", GpuArchitecture::hopper, HostCpu::unknown}};
  for (const auto& [preset, architecture, host] : expected) {
    CAPTURE(preset);
    const ClusterSpec spec = load_cluster(preset);
    CHECK(spec.gpu_models.at(spec.groups.front().gpu_model).architecture == architecture);
    CHECK(spec.groups.front().host_cpu == host);
  }
}
