// --set PATH=VALUE: scalars replaced in the text, shorthand paths, quantities scaled, errors named.
#include <doctest/doctest.h>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"

using namespace treering::topologies;

namespace {

const char* kTwoGroups = R"(name: two   # a comment that must survive
gpu_models:
  A: {hbm_bandwidth: 3.35TB/s, hbm_capacity: 80GB, peak_fp16: 989TFLOPS}
  B: {hbm_bandwidth: 4.8TB/s, hbm_capacity: 141GB, peak_fp16: 989TFLOPS}
nodes:
  - name: a
    count: 2
    nics: {count: 8, bandwidth: 400Gb/s}   # NDR
  - name: b
    count: 1
    nics:
      count: 8
      bandwidth: "200Gb/s"
)";

}  // namespace

TEST_CASE("a setting replaces one scalar in place; a shorthand path every group's") {
  std::string text = apply_settings(kTwoGroups, "two.yaml", {{"nodes.1.count", "4"}});
  CHECK(text.find("    count: 4\n    nics:") != std::string::npos);
  CHECK(text.find("# a comment that must survive") != std::string::npos);
  text = apply_settings(kTwoGroups, "two.yaml", {{"nics.bandwidth", "800Gb/s"}});
  CHECK(text.find("{count: 8, bandwidth: 800Gb/s}   # NDR") != std::string::npos);  // flow map, comment kept
  CHECK(text.find("      bandwidth: 800Gb/s\n") != std::string::npos);              // the quoted one replaced whole
  CHECK(setting_values(text, "two.yaml", "nics.bandwidth") == std::vector<std::string>{"800Gb/s", "800Gb/s"});
  CHECK(setting_values(kTwoGroups, "two.yaml", "hbm_bandwidth") == std::vector<std::string>{"3.35TB/s", "4.8TB/s"});
  CHECK(setting_values(kTwoGroups, "two.yaml", "gpu_models.B.hbm_capacity") == std::vector<std::string>{"141GB"});
}

TEST_CASE("a setting reaches the loaded cluster: dgx-h100 with 800 Gb/s NICs and 4 nodes") {
  ClusterOverrides overrides;
  overrides.settings = {parse_setting("nics.bandwidth=800Gb/s"), parse_setting("nodes.0.count=4")};
  const Topology topology = build_topology("dgx-h100", overrides);
  CHECK(topology.node_count() == 4);
  CHECK(topology.spec().groups[0].nics.bandwidth_Bps == doctest::Approx(100e9).scale(1e-12));  // 800 Gb/s = 100 GB/s
}

TEST_CASE("bad settings: no '=', a path that names no value, a value the loader refuses") {
  CHECK_THROWS_WITH_AS(parse_setting("nics.bandwidth"), doctest::Contains("expected PATH=VALUE"), InputError);
  CHECK_THROWS_WITH_AS(parse_setting("=3"), doctest::Contains("expected PATH=VALUE"), InputError);
  CHECK_THROWS_WITH_AS(apply_settings(kTwoGroups, "two.yaml", {{"nodes.0.nics.speed.x", "1"}}),
                       doctest::Contains("has no value at 'nodes.0.nics.speed.x'"), InputError);
  // A key the schema lacks is added, and the loader names it unknown at the map's line.
  CHECK_THROWS_WITH_AS(build_topology("dgx-h100", {std::nullopt, std::nullopt, {parse_setting("nics.speed=1")}}),
                       doctest::Contains("speed"), InputError);
  CHECK_THROWS_WITH_AS(apply_settings(kTwoGroups, "two.yaml", {{"nodes.7.count", "1"}}),
                       doctest::Contains("has no value"), InputError);
  CHECK_THROWS_WITH_AS(apply_settings(kTwoGroups, "two.yaml", {{"nodes.0.nics", "1"}}),
                       doctest::Contains("has no value"), InputError);
  ClusterOverrides overrides;
  overrides.settings = {parse_setting("nics.bandwidth=fast")};
  // The loader reads the replaced text: its error points at the preset's line holding the new value.
  CHECK_THROWS_WITH_AS(build_topology("dgx-h100", overrides), doctest::Contains("preset:dgx-h100:"), InputError);
}

TEST_CASE("scaling a shorthand path scales each group's own value") {
  const std::string text = scale_setting(kTwoGroups, "two.yaml", "hbm_bandwidth", 2);
  CHECK(setting_values(text, "two.yaml", "hbm_bandwidth") == std::vector<std::string>{"6.7TB/s", "9.6TB/s"});
}

TEST_CASE("quantities scale in their own unit") {
  CHECK(scale_quantity("450GB/s", 1.01) == "454.5GB/s");
  CHECK(scale_quantity("1.5us", 2) == "3us");
  CHECK(scale_quantity("0.92", 0.5) == "0.46");
  CHECK_THROWS_AS(scale_quantity("fast", 2), InputError);
}

TEST_CASE("--set adds nccl_version where the file leaves it out, and the loader checks it") {
  const char* one_node = R"(name: one
gpu_models:
  A: {hbm_bandwidth: 3.35TB/s, hbm_capacity: 80GB, peak_fp16: 989TFLOPS, launch_overhead: 3us}
nodes:
  - {name: a, count: 1, gpu: A, gpus_per_node: 8, fabric: {type: nvswitch, bandwidth: 450GB/s, latency: 0.6us}}
)";
  std::string text = apply_settings(one_node, "one.yaml", {{"nccl_version", "2.26.2"}});
  CHECK(text.substr(text.size() - 21) == "nccl_version: 2.26.2\n");
  const ClusterSpec spec = load_cluster_text(text, "one.yaml");
  CHECK(spec.nccl_version.minor == 26);
  CHECK(spec.nccl_version.patch == 2);
  CHECK(spec.nccl_version.given);
  CHECK_THROWS_WITH_AS(apply_settings(one_node, "one.yaml", {{"ncl_version", "2.26"}}),
                       doctest::Contains("has no value at 'ncl_version'"), InputError);
  CHECK_THROWS_WITH_AS(
      load_cluster_text(apply_settings(one_node, "one.yaml", {{"nccl_version", "2.26abc"}}), "one.yaml"),
      doctest::Contains("nccl_version must be an NCCL release such as 2.26.2, got '2.26abc'"), InputError);
  CHECK(to_string(load_cluster_text(apply_settings(one_node, "one.yaml", {{"nccl_version", "2.26"}}), "one.yaml")
                      .nccl_version) == "2.26");
}

TEST_CASE("--set adds only the optional top-level keys, and says why it cannot elsewhere") {
  // A key of a node group or GPU model is not added at the root (the loader would call it unknown there).
  CHECK_THROWS_WITH_AS(apply_settings(kTwoGroups, "two.yaml", {{"host_cpu", "amd"}}),
                       doctest::Contains("has no value at 'host_cpu'"), InputError);
  // A flow-style root takes no appended line (it would become a second document).
  CHECK_THROWS_WITH_AS(apply_settings("{name: x, nodes: []}\n", "flow.yaml", {{"nccl_version", "2.26.2"}}),
                       doctest::Contains("flow-style"), InputError);
  // A key present without a value.
  CHECK_THROWS_WITH_AS(apply_settings("name: x\nnccl_version:\n", "null.yaml", {{"nccl_version", "2.26.2"}}),
                       doctest::Contains("'nccl_version' is empty in null.yaml"), InputError);
  // A file without a final newline gets one before the added key.
  CHECK(apply_settings("name: x", "x.yaml", {{"nccl_version", "2.26"}}) == "name: x\nnccl_version: 2.26\n");
}

TEST_CASE("--set adds a key the schema allows to the maps that lack it, block or flow style") {
  // fabric.domain_nodes is optional (default 1), and dgx-h100's fabric leaves it out.
  ClusterOverrides overrides;
  overrides.settings = {parse_setting("fabric.domain_nodes=2")};
  const Topology topology = build_topology("dgx-h100", overrides);
  CHECK(topology.spec().groups[0].fabric.domain_nodes == 2);
  // Into a flow map: "{count: 8, ...}" becomes "{latency: 2us, count: 8, ...}"; into a block map, a line above
  // its first key at the same indentation.
  const std::string text = apply_settings(kTwoGroups, "two.yaml", {{"nics.latency", "2us"}});
  CHECK(text.find("nics: {latency: 2us, count: 8, bandwidth: 400Gb/s}   # NDR") != std::string::npos);
  CHECK(text.find("    nics:\n      latency: 2us\n      count: 8\n") != std::string::npos);
  CHECK(setting_values(text, "two.yaml", "nics.latency") == std::vector<std::string>{"2us", "2us"});
}

TEST_CASE("--set of the node count or GPUs per node beside --nodes or --gpus-per-node is a conflict") {
  CHECK_THROWS_WITH_AS(build_topology("dgx-h100", {8, std::nullopt, {parse_setting("nodes.0.count=4")}}),
                       "error: --set nodes.0.count=4 and --nodes 8 both set the node count: give one", InputError);
  CHECK_THROWS_WITH_AS(build_topology("dgx-h100", {8, std::nullopt, {parse_setting("count=4")}}),
                       doctest::Contains("both set the node count"), InputError);
  CHECK_THROWS_WITH_AS(build_topology("dgx-h100", {std::nullopt, 4, {parse_setting("gpus_per_node=2")}}),
                       doctest::Contains("both set the GPUs per node"), InputError);
  // A NIC setting is no node count.
  CHECK(build_topology("dgx-h100", {2, std::nullopt, {parse_setting("nodes.0.nics.bandwidth=200Gb/s")}}).node_count() ==
        2);
}
