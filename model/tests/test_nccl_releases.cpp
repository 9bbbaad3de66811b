// The NCCL release a cluster names picks that release's constants. Each expected figure is the release's
// src/graph/tuning.cc table entry (read at tags v2.19.4-1 ... v2.30.7-1), or a sum of them worked by hand.
#include <doctest/doctest.h>

#include <string>

#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::LatencyRow;

namespace {

constexpr int kSimple = 2;

double us(double seconds) { return seconds * 1e6; }

topologies::Topology dgx_h100(int nodes, const std::string& release) {
  return topologies::build_topology("dgx-h100", {nodes, {}, {{"nccl_version", release}}});
}

}  // namespace

TEST_CASE("tree/Simple: base 0 and 28 us a hop up to 2.22, base 8.4 and 4.0 / 14 us from 2.23; a send's hop stays 14") {
  const model::LatencyTable old = model::nccl_latency_defaults(false, 22);
  CHECK(us(old.base[int(LatencyRow::tree)][kSimple]) == doctest::Approx(0.0).scale(1e-12));
  CHECK(us(old.scale_up_step[int(LatencyRow::tree)][kSimple]) == doctest::Approx(28.0).scale(1e-12));
  CHECK(us(old.scale_out_step[int(LatencyRow::tree)][kSimple]) == doctest::Approx(28.0).scale(1e-12));
  CHECK(us(old.scale_out_step[int(LatencyRow::ring)][kSimple]) == doctest::Approx(14.0).scale(1e-12));  // NCCL's ring NET figure
  CHECK(us(old.scale_out_step[int(LatencyRow::p2p)][kSimple]) == doctest::Approx(14.0).scale(1e-12));
  const model::LatencyTable now = model::nccl_latency_defaults(false, 23);
  CHECK(us(now.base[int(LatencyRow::tree)][kSimple]) == doctest::Approx(8.4).scale(1e-12));
  CHECK(us(now.scale_up_step[int(LatencyRow::tree)][kSimple]) == doctest::Approx(4.0).scale(1e-12));
  CHECK(us(now.scale_out_step[int(LatencyRow::tree)][kSimple]) == doctest::Approx(14.0).scale(1e-12));
}

TEST_CASE("NVLS's NVLink figure is 23 us up to 2.20, 25 from 2.21; NVLS-tree's network figure 14 us up to 2.27, 20.9 from 2.28") {
  CHECK(us(model::nccl_latency_defaults(false, 20).scale_up_step[int(LatencyRow::nvls)][kSimple]) == doctest::Approx(23.0).scale(1e-12));
  CHECK(us(model::nccl_latency_defaults(false, 21).scale_up_step[int(LatencyRow::nvls_tree)][kSimple]) == doctest::Approx(25.0).scale(1e-12));
  CHECK(us(model::nccl_latency_defaults(false, 27).scale_out_step[int(LatencyRow::nvls_tree)][kSimple]) == doctest::Approx(14.0).scale(1e-12));
  CHECK(us(model::nccl_latency_defaults(false, 28).scale_out_step[int(LatencyRow::nvls_tree)][kSimple]) == doctest::Approx(20.9).scale(1e-12));
}

TEST_CASE("2 x DGX H100, 64 MiB by NVLS-tree: NCCL 2.26.2 charges 2 x (20.9 - 14) = 13.8 us less than 2.30.7") {
  const model::CommGroup older = model::describe_group(dgx_h100(2, "2.26.2"));
  const model::CommGroup newer = model::describe_group(dgx_h100(2, "2.30.7"));
  CHECK(older.nccl_version.minor == 26);
  CHECK(older.nccl_version.patch == 2);
  model::CollectiveRequest request;
  request.bytes = 64.0 * 1024 * 1024;
  request.algorithm = model::CollectiveAlgorithm::nvls_tree;
  const double difference_s = model::estimate_collective(newer, request).chosen.time_s - model::estimate_collective(older, request).chosen.time_s;
  CHECK(us(difference_s) == doctest::Approx(13.8).scale(1e-12).epsilon(1e-9));
  // 25 + 2 x log2(2) x 14 = 53 us of NCCL's constants (the chunk pipeline's fill comes on top).
  CHECK(us(older.latency.scale_up_step[int(LatencyRow::nvls_tree)][kSimple] + 2 * older.latency.scale_out_step[int(LatencyRow::nvls_tree)][kSimple]) ==
        doctest::Approx(53.0).scale(1e-12));
}

TEST_CASE("Blackwell's caps by release: Hopper's up to 2.24, twice Hopper's 2.25-2.27, then 2.28's and 2.29's own") {
  const model::NcclRows blackwell = model::nccl_rows(topologies::GpuArchitecture::blackwell, topologies::HostCpu::intel);
  // 2 nodes of 8 NICs, ring LL128 per search channel: 36.7 (2.24), 73.4 (2.26), 34.6 (2.28), 40 (2.29).
  CHECK(model::nccl_channels(2, 8, blackwell, 24).ll128_bus_Bps == doctest::Approx(8 * 36.7e9).scale(1e-12));
  CHECK(model::nccl_channels(2, 8, blackwell, 26).ll128_bus_Bps == doctest::Approx(8 * 73.4e9).scale(1e-12));
  CHECK(model::nccl_channels(2, 8, blackwell, 28).ll128_bus_Bps == doctest::Approx(8 * 34.6e9).scale(1e-12));
  CHECK(model::nccl_channels(2, 8, blackwell, 29).ll128_bus_Bps == doctest::Approx(8 * 40e9).scale(1e-12));
  // More nodes, Simple tree: 36 (Hopper's, 2.24), 72 (2.26), 24 (2.28 on).
  CHECK(model::nccl_channels(4, 8, blackwell, 24).tree_bus_Bps == doctest::Approx(8 * 36e9).scale(1e-12));
  CHECK(model::nccl_channels(4, 8, blackwell, 26).tree_bus_Bps == doctest::Approx(8 * 72e9).scale(1e-12));
  CHECK(model::nccl_channels(4, 8, blackwell, 30).tree_bus_Bps == doctest::Approx(8 * 24e9).scale(1e-12));
  CHECK(model::nccl_channels(4, 8, blackwell, 24).nvls_channels == 16);  // NVLS_NCHANNELS_SM100 from 2.25
  CHECK(model::nccl_channels(4, 8, blackwell, 25).nvls_channels == 32);
}
