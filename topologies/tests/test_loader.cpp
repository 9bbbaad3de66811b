// The loader on valid input: fields, documented defaults, heterogeneous groups, calibration.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "small_clusters.hpp"

using namespace treering::topologies;
using namespace treering::topologies::testing;

TEST_CASE("fields are read with their units, and optional keys take their documented defaults") {
  ClusterSpec spec = load_cluster_text(cluster_head("c") + "nodes:\n" + nvswitch_group(3, 8, 4), "c.yaml");
  CHECK(spec.name == "c");
  CHECK(spec.source == "c.yaml");
  const GpuModel& gpu = spec.gpu_models.at("G");
  CHECK(gpu.hbm_bandwidth_Bps == doctest::Approx(2e12).scale(1e-12));
  CHECK(gpu.hbm_capacity_bytes == doctest::Approx(80e9).scale(1e-12));
  CHECK(gpu.peak_fp16_flops == doctest::Approx(1e15).scale(1e-12));
  CHECK(gpu.launch_overhead_s == doctest::Approx(2e-6).scale(1e-12));
  const NodeGroup& group = spec.groups.front();
  CHECK(group.count == 3);
  CHECK(group.max_gpus_per_node == 8);  // defaults to gpus_per_node
  CHECK(group.fabric.domain_nodes == 1);
  CHECK_FALSE(group.fabric.in_switch_reduction);
  CHECK(group.fabric.p2p_channel_bandwidth_Bps == 0);  // optional: no channel limit
  CHECK(group.nics.bandwidth_Bps == doctest::Approx(25e9).scale(1e-12));
  // 8 GPUs over 4 NICs in blocks: 0 0 1 1 2 2 3 3.
  CHECK(group.nics.gpu_to_nic == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(spec.node_count() == 3);
  CHECK(spec.gpu_count() == 24);
  CHECK(spec.network.topology == NetworkTopology::none);
  CHECK_FALSE(spec.calibration.has_value());
}

TEST_CASE("block_gpu_to_nic spreads GPUs over NICs") {
  CHECK(block_gpu_to_nic(8, 4) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(block_gpu_to_nic(4, 8) == std::vector<int>{0, 2, 4, 6});  // floor(g * 8 / 4)
  CHECK(block_gpu_to_nic(3, 1) == std::vector<int>{0, 0, 0});
  CHECK(block_gpu_to_nic(4, 0).empty());
}

TEST_CASE("heterogeneous clusters: groups differ in GPU and NICs, and --nodes refuses them") {
  std::string yaml = cluster_head("mixed") +
                     "  H:\n    hbm_bandwidth: 4.8TB/s\n    hbm_capacity: 141GB\n    peak_fp16: 989TFLOPS\n"
                     "    launch_overhead: 3us\n"
                     "nodes:\n" +
                     nvswitch_group(2, 8, 8) +
                     "  - name: big\n    count: 1\n    gpu: H\n    gpus_per_node: 8\n"
                     "    fabric: {type: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                     "    nics: {count: 4, bandwidth: 400Gb/s, latency: 2us}\n"
                     "network: {topology: rail-optimized, switch_radix: 64, hop_latency: 0.2us}\n";
  ClusterSpec spec = load_cluster_text(yaml, "mixed.yaml");
  Topology topology(spec);
  CHECK(topology.gpu_count() == 24);
  CHECK(topology.node(2).group == 1);
  CHECK(topology.node(2).first_gpu == 16);
  // Node 2 GPU 0 uses NIC 0 (rail 0), as does node 0 GPU 0: one leaf between them.
  CHECK(topology.route(0, 16).links.size() == 4);
  CHECK_THROWS_WITH_AS(apply_overrides(spec, {4, std::nullopt}),
                       "error: --nodes needs a cluster with one node group; 'mixed' has 2 (set each group's count in "
                       "the file)",
                       InputError);
}

TEST_CASE("a calibration section is read and kept with its provenance") {
  std::string yaml =
      cluster_head("cal") + "nodes:\n" + nvswitch_group(1, 8, 0) +
      "calibration:\n"
      "  provenance: {inputs: [a.log, b.json], date: '2026-11-21', tool: treering calibrate, "
      "r_squared: 0.99}\n"
      "  tiers:\n    scale-up: {latency: 2us, bandwidth: 360GB/s}\n"
      "  collectives:\n    ring: {base_latency: 6.6us, scale_out_step_latency: 2.7us}\n"
      "  compute: {hbm_efficiency: 0.8, launch_overhead: 4us}\n"
      "  step:\n    mlp: {fixed: 13.3us, efficiency: 0.87}\n    lm_head: {fixed: 47us, efficiency: 0.79}\n"
      "    attention_by_shape:\n      - {head_dim: 64, group: 4, fixed: 14.5us, efficiency: 0.8}\n";
  ClusterSpec spec = load_cluster_text(yaml, "cal.yaml");
  REQUIRE(spec.calibration.has_value());
  const Calibration& calibration = *spec.calibration;
  CHECK(calibration.provenance.inputs == std::vector<std::string>{"a.log", "b.json"});
  CHECK(calibration.provenance.r_squared.value() == doctest::Approx(0.99).scale(1e-12));
  CHECK(calibration.scale_up->bandwidth_Bps == doctest::Approx(360e9).scale(1e-12));
  CHECK_FALSE(calibration.scale_out.has_value());
  CHECK(calibration.collectives.at("ring").base_latency_s.value() == doctest::Approx(6.6e-6).scale(1e-12));
  CHECK_FALSE(calibration.collectives.at("ring").scale_up_step_latency_s.has_value());
  CHECK(calibration.hbm_efficiency.value() == doctest::Approx(0.8).scale(1e-12));
  CHECK(calibration.step[2].fixed_s == doctest::Approx(13.3e-6).scale(1e-12));  // mlp
  CHECK(calibration.step[2].efficiency == doctest::Approx(0.87).scale(1e-12));
  CHECK(calibration.step[4].efficiency == doctest::Approx(0.79).scale(1e-12));  // lm_head
  CHECK(calibration.step[0].efficiency == 0);               // attention: not calibrated for every shape ...
  REQUIRE(calibration.step_attention_shapes.size() == 1u);  // ... but for head dim 64, group 4
  CHECK(calibration.step_attention_shapes[0].head_dim == 64);
  CHECK(calibration.step_attention_shapes[0].group == 4);
  CHECK(calibration.step_attention_shapes[0].line.fixed_s == doctest::Approx(14.5e-6).scale(1e-12));
}

TEST_CASE("the commented example in topologies/README.md loads (the docs stay in step with the loader)") {
  std::ifstream in(std::string(TREERING_SOURCE_DIR) + "/topologies/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t start = readme.find("```yaml\n");
  REQUIRE(start != std::string::npos);
  const size_t end = readme.find("```", start + 8);
  ClusterSpec spec = load_cluster_text(readme.substr(start + 8, end - start - 8), "README.md example");
  Topology topology(spec);
  CHECK(topology.gpu_count() == 16);  // 2 nodes x 8
  CHECK(spec.calibration.has_value());
}
