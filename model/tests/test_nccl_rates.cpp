// NCCL's size-dependent rates (model/src/nccl_rates.hpp) on hand-derived cases: 2 x DGX H100 (8 NICs per node:
// 8 search channels, 16 execution channels, 16 NVLS channels; tiers: min(0.8 x 450, 8 x 0.92 x 50) = 360 GB/s
// bus, in-switch 0.6 x 450 = 270 GB/s).
#include <doctest/doctest.h>

#include "../src/nccl_rates.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::Protocol;

namespace {

model::CommGroup dgx(int nodes) { return model::describe_group(topologies::build_topology("dgx-h100", {nodes, {}})); }

constexpr double kGB = 1e9;
constexpr double kMiB = 1048576;

}  // namespace

TEST_CASE("channels and caps follow the NICs across nodes, none inside one node") {
  const model::CommGroup two = dgx(2);
  CHECK(two.nccl.search_channels == 8);
  CHECK(two.nccl.channels == 16);
  CHECK(two.nccl.ll_max_bus_Bps == doctest::Approx(39 * kGB).scale(1e-12));       // llMaxBws Intel, 2 nodes
  CHECK(two.nccl.ll128_bus_Bps == doctest::Approx(8 * 36.7 * kGB).scale(1e-12));  // 293.6 GB/s
  CHECK(dgx(4).nccl.tree_ll128_bus_Bps == doctest::Approx(8 * 29.0 * kGB).scale(1e-12));
  CHECK(dgx(1).nccl.channels == 0);
}

TEST_CASE("NCCL narrows channels for small buffers") {
  const model::CommGroup two = dgx(2);
  // ring/LL: threshold 8 B x 16 ranks, 512 threads: 256 KiB / 65,536 B = 4 channels; 1 MiB and more: all 16.
  CHECK(model::nccl_channels_used(two, CollectiveAlgorithm::ring, Protocol::ll, 256 * 1024) == 4);
  CHECK(model::nccl_channels_used(two, CollectiveAlgorithm::ring, Protocol::ll, kMiB) == 16);
  // tree/LL: 512 x 8 B = 4 KiB per channel: 8 KiB -> 2, 100 B -> 1 (never 0).
  CHECK(model::nccl_channels_used(two, CollectiveAlgorithm::tree, Protocol::ll, 8192) == 2);
  CHECK(model::nccl_channels_used(two, CollectiveAlgorithm::tree, Protocol::ll, 100) == 1);
}

TEST_CASE("per-protocol bus bandwidth: caps, tree correction, channel share") {
  const model::CommGroup two = dgx(2);
  const double tier_Bps = 360 * kGB;
  // tree/LL128 at 1 MiB: min(360 x 0.92 x 120/128 = 310.5, 293.6) x 0.6 (index log2(2^20 / 64) = 14) = 176.16.
  CHECK(model::nccl_bus_Bps(two, CollectiveOp::allreduce, CollectiveAlgorithm::tree, Protocol::ll128, tier_Bps, kMiB) ==
        doctest::Approx(176.16 * kGB).scale(1e-12));
  // tree/LL at 128 KiB: min(331.2 / 3.8 = 87.2, 39) x 0.5 (index 11) = 19.5 GB/s, 16 channels (>= 64 KiB).
  CHECK(model::nccl_bus_Bps(two, CollectiveOp::allreduce, CollectiveAlgorithm::tree, Protocol::ll, tier_Bps, 131072) ==
        doctest::Approx(19.5 * kGB).scale(1e-12));
  // ring/LL at 256 KiB: min(0.5 x 360, 39) = 39 x 4/16 channels = 9.75 GB/s.
  CHECK(model::nccl_bus_Bps(two, CollectiveOp::allreduce, CollectiveAlgorithm::ring, Protocol::ll, tier_Bps, 262144) ==
        doctest::Approx(9.75 * kGB).scale(1e-12));
  // One node: the tier times the protocol factor, nothing else (LL: 180 GB/s).
  CHECK(model::nccl_bus_Bps(dgx(1), CollectiveOp::allreduce, CollectiveAlgorithm::tree, Protocol::ll, tier_Bps,
                            131072) == doctest::Approx(180 * kGB).scale(1e-12));
  CHECK(model::tree_correction(Protocol::simple, 32) == 1.0);
  CHECK(model::tree_correction(Protocol::ll, 64) == 1.0);
  CHECK(model::tree_correction(Protocol::ll, 1ull << 40) == 1.0);
}

TEST_CASE("NVLS-tree pipeline fill: (D - 1) chunks of every pipe at the transfer rate") {
  const model::CommGroup two = dgx(2);  // 16 channels x 8 heads = 128 pipes; D = 2 + 2 log2(2) = 4
  // 16 MiB: < 4 x 128 x 128 KiB = 64 MiB -> 64 KiB chunks (not < 128 x 64 KiB = 8 MiB): 3 x 8 MiB / 270 GB/s.
  CHECK(model::nvls_tree_fill_s(two, 16 * kMiB, 270 * kGB) == doctest::Approx(3 * 8 * kMiB / (270 * kGB)).scale(1e-12));
  // 1 MiB: 32 KiB chunks, but a pipe holds only 8 KiB: 3 x 1 MiB / 270 GB/s = 11.65 us.
  CHECK(model::nvls_tree_fill_s(two, kMiB, 270 * kGB) == doctest::Approx(3 * kMiB / (270 * kGB)).scale(1e-12));
  // 1 GiB: 128 KiB chunks: 3 x 16 MiB / 270 GB/s = 186.4 us, whatever the size above 64 MiB.
  CHECK(model::nvls_tree_fill_s(two, 1024 * kMiB, 270 * kGB) ==
        doctest::Approx(3 * 16 * kMiB / (270 * kGB)).scale(1e-12));
  CHECK(model::nvls_tree_fill_s(two, 0, 270 * kGB) == 0.0);
}

TEST_CASE("NVLS with SHARP: 4 stages whatever the node count, NVLS's chunk sizes") {
  const model::CommGroup two = dgx(2);  // 128 pipes, as NVLS-tree's
  // 16 MiB: < 64 x 128 x 128 KiB (1 GiB) -> 64 KiB; < 8 x 128 x 64 KiB (64 MiB) -> 32 KiB; not < 2 x 128 x 32 KiB
  // (8 MiB): 32 KiB chunks, 3 x 4 MiB / 270 GB/s (NVLS-tree's 64 KiB chunks give twice that).
  CHECK(model::nvls_sharp_fill_s(two, 16 * kMiB, 270 * kGB) ==
        doctest::Approx(3 * 4 * kMiB / (270 * kGB)).scale(1e-12));
  // 4 MiB: 16 KiB chunks (< 8 MiB), a pipe's share is 32 KiB: 3 x 2 MiB / 270 GB/s.
  CHECK(model::nvls_sharp_fill_s(two, 4 * kMiB, 270 * kGB) == doctest::Approx(3 * 2 * kMiB / (270 * kGB)).scale(1e-12));
  // 16 nodes: still 4 stages (NVLS-tree's would be 2 + 2 log2(16) = 10).
  CHECK(model::nvls_sharp_fill_s(dgx(16), 16 * kMiB, 270 * kGB) ==
        doctest::Approx(3 * 4 * kMiB / (270 * kGB)).scale(1e-12));
  CHECK(model::nvls_sharp_fill_s(two, 0, 270 * kGB) == 0.0);
}
