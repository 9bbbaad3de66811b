// The NCCL release a cluster names picks that release's constants. Each expected figure is the release's
// src/graph/tuning.cc or src/transport/nvls.cc entry (read at the tags named), or a sum of them worked by hand.
#include <doctest/doctest.h>

#include <string>

#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::LatencyRow;
using topologies::NcclVersion;

namespace {

constexpr int kSimple = 2;

double us(double seconds) { return seconds * 1e6; }

double nvls_tree_network_us(const NcclVersion& version) {
  return us(model::nccl_latency_defaults(false, version).scale_out_step[int(LatencyRow::nvls_tree)][kSimple]);
}

topologies::Topology dgx_h100(int nodes, const std::string& release) {
  return topologies::build_topology("dgx-h100", {nodes, {}, {{"nccl_version", release}}});
}

}  // namespace

TEST_CASE("NVLS-tree's network figure: 14 us up to 2.28.7 (v2.28.7-1), 20.9 from 2.28.9 (v2.28.9-1)") {
  CHECK(nvls_tree_network_us({26, 2, true}) == doctest::Approx(14.0).scale(1e-12));
  CHECK(nvls_tree_network_us({28, 7, true}) == doctest::Approx(14.0).scale(1e-12));
  CHECK(nvls_tree_network_us({28, -1, true}) == doctest::Approx(14.0).scale(1e-12));  // "2.28": its first release
  CHECK(nvls_tree_network_us({28, 9, true}) == doctest::Approx(20.9).scale(1e-12));
  CHECK(nvls_tree_network_us({30, 7, true}) == doctest::Approx(20.9).scale(1e-12));
  // Every other entry is the same from 2.23.4 to 2.30.7: tree/Simple base 8.4, NVLink 4.0, network 14.
  const model::LatencyTable table = model::nccl_latency_defaults(false, {23, 4, true});
  CHECK(us(table.base[int(LatencyRow::tree)][kSimple]) == doctest::Approx(8.4).scale(1e-12));
  CHECK(us(table.scale_up_step[int(LatencyRow::nvls_tree)][kSimple]) == doctest::Approx(25.0).scale(1e-12));
}

TEST_CASE("2 x DGX H100, 64 MiB by NVLS-tree: NCCL 2.26.2 charges 2 x (20.9 - 14) = 13.8 us less than 2.30.7") {
  const model::CommGroup older = model::describe_group(dgx_h100(2, "2.26.2"));
  const model::CommGroup newer = model::describe_group(dgx_h100(2, "2.30.7"));
  CHECK(older.nccl_version.minor == 26);
  CHECK(older.nccl_version.patch == 2);
  model::CollectiveRequest request;
  request.bytes = 64.0 * 1024 * 1024;
  request.algorithm = model::CollectiveAlgorithm::nvls_tree;
  const double difference_s = model::estimate_collective(newer, request).chosen.time_s -
                              model::estimate_collective(older, request).chosen.time_s;
  CHECK(us(difference_s) == doctest::Approx(13.8).scale(1e-12).epsilon(1e-9));
}

TEST_CASE(
    "Blackwell's ring LL128 cap by release, 8 NICs: Hopper's, 2 x Hopper's, then 2.28's, 2.28.7's, 2.29's, 2.29.7's") {
  const model::NcclRows blackwell =
      model::nccl_rows(topologies::GpuArchitecture::blackwell, topologies::HostCpu::intel);
  const auto ring_ll128_GBps = [&](int domains, const NcclVersion& version) {
    return model::nccl_channels({domains, 8, 50e9, 8}, blackwell, version).ll128_bus_Bps / 8 / 1e9;
  };
  CHECK(ring_ll128_GBps(2, {24, 3, true}) == doctest::Approx(36.7).scale(1e-12));  // v2.24.3-1: no Blackwell row
  CHECK(ring_ll128_GBps(2, {26, 2, true}) == doctest::Approx(73.4).scale(1e-12));  // v2.25.1-1 .. v2.27.7-1: 2 x 36.7
  CHECK(ring_ll128_GBps(2, {28, 3, true}) == doctest::Approx(73.4).scale(1e-12));  // v2.28.3-1
  CHECK(ring_ll128_GBps(2, {28, 7, true}) == doctest::Approx(34.6).scale(1e-12));  // v2.28.7-1
  CHECK(ring_ll128_GBps(4, {28, 9, true}) == doctest::Approx(73.4).scale(1e-12));
  CHECK(ring_ll128_GBps(4, {29, 2, true}) == doctest::Approx(34.5).scale(1e-12));  // v2.29.2-1
  CHECK(ring_ll128_GBps(2, {29, 7, true}) == doctest::Approx(40.0).scale(1e-12));  // v2.29.7-1
  // More nodes, Simple tree: 36 (Hopper's, 2.24), 72 (2.26), 24 (from 2.28).
  const auto tree_GBps = [&](const NcclVersion& version) {
    return model::nccl_channels({4, 8, 50e9, 8}, blackwell, version).tree_bus_Bps / 8 / 1e9;
  };
  CHECK(tree_GBps({24, 3, true}) == doctest::Approx(36.0).scale(1e-12));
  CHECK(tree_GBps({26, 2, true}) == doctest::Approx(72.0).scale(1e-12));
  CHECK(tree_GBps({28, 3, true}) == doctest::Approx(24.0).scale(1e-12));
}

TEST_CASE(
    "Blackwell's NVLS channels across nodes: 16 before 2.25, 32 from 2.25, tuned by node count and NIC from 2.30.3") {
  const model::NcclRows blackwell =
      model::nccl_rows(topologies::GpuArchitecture::blackwell, topologies::HostCpu::intel);
  const auto nvls = [&](int domains, double nic_Bps, int ppn, const NcclVersion& version) {
    return model::nccl_channels({domains, 8, nic_Bps, ppn}, blackwell, version).nvls_channels;
  };
  CHECK(nvls(4, 50e9, 8, {24, 3, true}) == 16);
  CHECK(nvls(4, 50e9, 8, {29, 7, true}) == 32);
  CHECK(nvls(2, 50e9, 8, {30, 7, true}) == 32);    // 2 nodes, NIC >= 48 GB/s
  CHECK(nvls(4, 50e9, 8, {30, 7, true}) == 24);    // NIC >= 48 GB/s
  CHECK(nvls(4, 100e9, 8, {30, 7, true}) == 24);   // NIC >= 96 GB/s, ppn <= 8
  CHECK(nvls(4, 100e9, 16, {30, 7, true}) == 32);  // NIC >= 96 GB/s, ppn > 8
  CHECK(nvls(4, 25e9, 8, {30, 7, true}) == 32);    // slower NICs: NVLS_NCHANNELS_SM100
  const model::NcclRows hopper = model::nccl_rows(topologies::GpuArchitecture::hopper, topologies::HostCpu::intel);
  CHECK(model::nccl_channels({4, 8, 50e9, 8}, hopper, {30, 7, true}).nvls_channels == 16);  // NVLS_NCHANNELS_SM90
}
