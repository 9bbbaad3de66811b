// NCCL's tuning rows by GPU architecture and host CPU, and the channel caps they give. Every figure is NCCL
// v2.30.7-1 src/graph/tuning.cc's (tunerConstants, getNetOverhead; GB/s per search channel, 2 nodes / more) or
// src/transport/nvls.cc's, multiplied out by hand below.
#include <doctest/doctest.h>

#include <string>

#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::NcclGpuRow;
using topologies::GpuArchitecture;
using topologies::HostCpu;

namespace {

const topologies::NcclVersion k2307;  // the default release, 2.30.7

model::NcclChannels channels(int domains, int nics, const model::NcclRows& rows) {
  return model::nccl_channels({domains, nics, 50e9, 8}, rows, k2307);
}

}  // namespace

TEST_CASE("an architecture picks NCCL's row by compute capability: Turing is a Volta row, Ada an Ampere one") {
  CHECK(model::nccl_rows(GpuArchitecture::turing, HostCpu::intel).gpu == NcclGpuRow::volta);  // sm75 < 80
  CHECK(model::nccl_rows(GpuArchitecture::ada, HostCpu::intel).gpu == NcclGpuRow::ampere);    // sm89 < 90
  CHECK(model::nccl_rows(GpuArchitecture::hopper, HostCpu::intel).gpu == NcclGpuRow::hopper);
  CHECK(model::nccl_rows(GpuArchitecture::blackwell, HostCpu::arm).gpu == NcclGpuRow::blackwell);
  CHECK_FALSE(
      model::amd_ll_row(model::nccl_rows(GpuArchitecture::blackwell, HostCpu::arm), k2307));  // Arm alone: row 0
  const model::NcclRows unknown = model::nccl_rows(GpuArchitecture::unknown, HostCpu::unknown);
  CHECK(unknown.gpu == NcclGpuRow::hopper);
  CHECK(model::describe(unknown, k2307) ==
        "Hopper GPUs, Intel hosts (assumed: the cluster file names no GPU architecture or host CPU)");
}

TEST_CASE(
    "a communicator takes its oldest GPU's row, and the AMD LL row for an AMD host or, from 2.24, mixed vendors") {
  const model::NcclRows hopper_amd = model::combine(model::nccl_rows(GpuArchitecture::hopper, HostCpu::intel),
                                                    model::nccl_rows(GpuArchitecture::ampere, HostCpu::amd));
  CHECK(hopper_amd.gpu == NcclGpuRow::ampere);
  CHECK(model::amd_ll_row(hopper_amd, k2307));
  // Intel + Arm (Grace): NCCL_TOPO_CPU_VENDOR_MIXED, the AMD row in 2.24 and later, not in 2.23.
  const model::NcclRows intel_arm = model::combine(model::nccl_rows(GpuArchitecture::hopper, HostCpu::intel),
                                                   model::nccl_rows(GpuArchitecture::blackwell, HostCpu::arm));
  CHECK(model::amd_ll_row(intel_arm, k2307));
  CHECK_FALSE(model::amd_ll_row(intel_arm, {23, 4, true}));
  CHECK(model::describe(intel_arm, k2307) == "Hopper GPUs, mixed hosts (the AMD row)");
  CHECK(channels(2, 8, intel_arm).network_post_s ==
        doctest::Approx(1e-6).scale(1e-12));  // getNetOverhead: 2 only for AMD x86
}

TEST_CASE("caps across nodes: 8 NICs on Ampere with AMD hosts, and Blackwell beyond 2 nodes") {
  const model::NcclChannels a100 = channels(2, 8, model::nccl_rows(GpuArchitecture::ampere, HostCpu::amd));
  CHECK(a100.channels == 16);                                             // 2 x 8 search channels
  CHECK(a100.ll_max_bus_Bps == doctest::Approx(22.5e9).scale(1e-12));     // llMaxBws[AMD][2 nodes]
  CHECK(a100.ll128_bus_Bps == doctest::Approx(160e9).scale(1e-12));       // 8 x 20
  CHECK(a100.tree_ll128_bus_Bps == doctest::Approx(160e9).scale(1e-12));  // 8 x 20
  CHECK(a100.tree_bus_Bps == doctest::Approx(188.8e9).scale(1e-12));      // 8 x 23.6
  CHECK(a100.network_post_s == doctest::Approx(2e-6).scale(1e-12));       // getNetOverhead on AMD x86
  const model::NcclChannels b200 = channels(4, 8, model::nccl_rows(GpuArchitecture::blackwell, HostCpu::intel));
  CHECK(b200.ll_max_bus_Bps == doctest::Approx(20.4e9).scale(1e-12));     // llMaxBws[Intel][more]
  CHECK(b200.ll128_bus_Bps == doctest::Approx(320e9).scale(1e-12));       // 8 x 40
  CHECK(b200.tree_ll128_bus_Bps == doctest::Approx(160e9).scale(1e-12));  // 8 x 20
  CHECK(b200.tree_bus_Bps == doctest::Approx(192e9).scale(1e-12));        // 8 x 24
  CHECK(channels(1, 8, model::nccl_rows(GpuArchitecture::ampere, HostCpu::amd)).search_channels == 0);
}

TEST_CASE("AMD Instinct GPUs run RCCL: NCCL's per-channel caps are not applied") {
  const model::NcclChannels mi300x = channels(2, 8, model::nccl_rows(GpuArchitecture::cdna3, HostCpu::amd));
  CHECK(mi300x.channels == 16);
  CHECK(mi300x.ll_max_bus_Bps == 0);
  CHECK(mi300x.ll128_bus_Bps == 0);
  CHECK(mi300x.tree_bus_Bps == 0);
}

TEST_CASE("2 DGX A100 (AMD EPYC hosts): an 8 KiB all-reduce's tree/LL rate is capped at 22.5 GB/s, not 39") {
  const topologies::Topology topology = topologies::build_topology("dgx-a100", {2, {}});
  const model::CommGroup group = model::describe_group(topology);
  CHECK(group.nccl.rows.gpu == NcclGpuRow::ampere);
  CHECK(group.nccl.rows.amd_host);
  model::CollectiveRequest request;
  request.bytes = 8192;
  request.algorithm = model::CollectiveAlgorithm::tree;
  request.protocol = model::Protocol::ll;
  // Latency 6.8 + 2 (7 x 0.6 + 5.0) = 25.2 us. Rate: the domain's NICs 8 x 0.92 x 25 GB/s = 184 GB/s, x 0.92 =
  // 169.28 (under the tree cap 8 x 23.6), / 3.8 = 44.55, capped at 22.5; x 0.7 (treeCorrectionFactor LL at
  // 8 KiB = 64 B x 2^7) x 2 of 16 channels (8192 B / (512 threads x 8 B)) = 1.96875 GB/s; transfer 2 x 8192 B /
  // 1.96875 GB/s = 8.322 us. On an Intel host the cap is 39: 39 x 0.7 x 2/16 = 3.4125 GB/s, 4.801 us.
  CHECK(model::estimate_collective(group, request).chosen.time_s ==
        doctest::Approx(25.2e-6 + 16384 / 1.96875e9).scale(1e-12));
  const model::CommGroup intel =
      model::describe_group(topologies::build_topology("dgx-a100", {2, {}, {{"nodes.0.host_cpu", "intel"}}}));
  CHECK(model::estimate_collective(intel, request).chosen.time_s ==
        doctest::Approx(25.2e-6 + 16384 / 3.4125e9).scale(1e-12));
}
