// Tier figures of GPU groups, derived by hand from the presets' datasheet numbers.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "treering/model/comm_group.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

topologies::Topology preset(const std::string& name, int nodes) {
  return topologies::build_topology(name, {nodes, {}});
}

}  // namespace

TEST_CASE("2 DGX H100: NVSwitch, NVLS and NDR figures") {
  model::CommGroup group = model::describe_group(preset("dgx-h100", 2));
  CHECK(group.ranks == 16);
  CHECK(group.domains == 2);
  CHECK(group.ranks_per_domain == 8);
  CHECK(group.uniform);
  CHECK_FALSE(group.pcie);
  CHECK(group.in_switch_reduction);
  CHECK(group.scale_up_bus_Bps == doctest::Approx(360e9).scale(1e-12));      // 0.80 x 450 GB/s
  CHECK(group.in_switch_Bps == doctest::Approx(270e9).scale(1e-12));         // 0.60 x 450 GB/s
  CHECK(group.scale_out_domain_Bps == doctest::Approx(368e9).scale(1e-12));  // 0.92 x 8 x 50 GB/s
  CHECK(group.scale_out_gpu_Bps == doctest::Approx(46e9).scale(1e-12));      // 368 / 8
  CHECK(group.scale_out_nic_Bps == doctest::Approx(46e9).scale(1e-12));
  CHECK(group.scale_up_pair_Bps == doctest::Approx(360e9).scale(1e-12));
  // NCCL 2.30.7 tree/LL: base 6.8 us, NVLink step 0.6 us, NET step 5.0 us.
  CHECK(group.latency.base[int(model::LatencyRow::tree)][0] == doctest::Approx(6.8e-6).scale(1e-12));
  CHECK(group.latency.scale_up_step[int(model::LatencyRow::tree)][0] == doctest::Approx(0.6e-6).scale(1e-12));
  CHECK(group.latency.scale_out_step[int(model::LatencyRow::tree)][0] == doctest::Approx(5.0e-6).scale(1e-12));
}

TEST_CASE("a PCIe box without P2P: the ring shares each switch's uplink four ways") {
  // 8 GPUs under 2 switches (4 each), every transfer through the host: the uplink of switch 0 carries the
  // ring edges 0->1, 1->2, 2->3, 3->4: 31.5 GB/s / 4 x 0.80 = 6.3 GB/s.
  model::CommGroup group = model::describe_group(preset("rtx4090-pcie", 1));
  CHECK(group.pcie);
  CHECK_FALSE(group.in_switch_reduction);
  CHECK(group.scale_up_bus_Bps == doctest::Approx(6.3e9).scale(1e-12));
  CHECK(group.latency.scale_up_step[int(model::LatencyRow::ring)][2] ==
        doctest::Approx(5.7e-6).scale(1e-12));  // PCI Simple
}

TEST_CASE("a sub-group: one GPU in each of two nodes") {
  model::CommGroup group = model::describe_group(preset("dgx-h100", 2), {0, 8});
  CHECK(group.ranks == 2);
  CHECK(group.domains == 2);
  CHECK(group.ranks_per_domain == 1);
  CHECK(group.scale_out_gpu_Bps == doctest::Approx(46e9).scale(1e-12));  // GPU 0 uses NIC 0 only: 0.92 x 50 GB/s
  CHECK(group.scale_out_nic_Bps == doctest::Approx(46e9).scale(1e-12));
  CHECK_THROWS_AS(model::describe_group(preset("dgx-h100", 2), {0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(model::describe_group(preset("dgx-h100", 2), {0, 16}), std::invalid_argument);
}

TEST_CASE("calibration replaces tier figures and latency rows") {
  topologies::ClusterSpec spec = topologies::load_cluster_text(
      "name: cal\ngpu_models:\n  G: {hbm_bandwidth: 2TB/s, hbm_capacity: 80GB, peak_fp16: 1PFLOPS, launch_overhead: "
      "2us}\n"
      "nodes:\n  - {name: n, count: 2, gpu: G, gpus_per_node: 4, fabric: {type: nvswitch, bandwidth: 400GB/s, latency: "
      "1us},"
      " nics: {count: 4, bandwidth: 400Gb/s, latency: 1us}}\n"
      "network: {topology: single-switch, hop_latency: 0.1us}\n"
      "calibration:\n  provenance: {inputs: [x.log], date: '2026-11-21', tool: test}\n"
      "  tiers: {scale-up: {latency: 1us, bandwidth: 300GB/s}, scale-out: {latency: 3us, bandwidth: 40GB/s}}\n"
      "  collectives: {ring: {base_latency: 5us}}\n",
      "cal.yaml");
  model::CommGroup group = model::describe_group(topologies::Topology(spec));
  CHECK(group.scale_up_bus_Bps == doctest::Approx(300e9).scale(1e-12));
  CHECK(group.scale_out_domain_Bps == doctest::Approx(160e9).scale(1e-12));  // 4 NICs x 40 GB/s calibrated
  CHECK(group.scale_out_nic_Bps == doctest::Approx(40e9).scale(1e-12));
  for (int protocol = 0; protocol < model::kProtocols; ++protocol) {
    CHECK(group.latency.base[int(model::LatencyRow::ring)][protocol] == doctest::Approx(5e-6).scale(1e-12));
    CHECK(group.latency.scale_out_step[int(model::LatencyRow::tree)][protocol] == doctest::Approx(3e-6).scale(1e-12));
  }
  CHECK(group.latency.base[int(model::LatencyRow::tree)][0] == doctest::Approx(6.8e-6).scale(1e-12));  // untouched
}

TEST_CASE("the path to the NIC caps it: an 800 Gb/s NIC behind a 31.5 GB/s PCIe link") {
  topologies::ClusterSpec spec = topologies::load_cluster("rtx4090-pcie");
  spec.groups.front().nics.bandwidth_Bps = 100e9;  // 800 Gb/s
  // GPU 0 and GPU 8 (one per box): the route's bottleneck is the GPU's PCIe link, 31.5 GB/s x 0.92.
  model::CommGroup pair = model::describe_group(topologies::Topology(spec), {0, 8});
  CHECK(pair.scale_out_nic_Bps == doctest::Approx(0.92 * 31.5e9).scale(1e-12));
}

TEST_CASE("calibrated tier latencies leave NVLS's fixed costs alone and invent no NVLS protocols") {
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::Calibration calibration;
  calibration.scale_up = topologies::TierCalibration{0.5e-6, 360e9};
  calibration.collectives["nvls"].base_latency_s = 1e-6;
  spec.calibration = calibration;
  topologies::apply_overrides(spec, {1, std::nullopt});
  model::CommGroup group = model::describe_group(topologies::Topology(spec));
  CHECK(group.latency.scale_up_step[int(model::LatencyRow::ring)][0] == doctest::Approx(0.5e-6).scale(1e-12));
  CHECK(group.latency.scale_up_step[int(model::LatencyRow::nvls)][2] == doctest::Approx(25e-6).scale(1e-12));
  CHECK(group.latency.base[int(model::LatencyRow::nvls)][2] == doctest::Approx(1e-6).scale(1e-12));
  CHECK(std::isinf(group.latency.base[int(model::LatencyRow::nvls)][0]));  // still no NVLS/LL
}
