// NCCL's channels for a point-to-point send (nccl_p2p_channels) and what they make of a send's rate, on the
// presets. Expected channel counts follow NCCL's rule by hand (src/enqueue.cc, scheduleP2pTasksToPlan and
// addP2pToPlan): floor = 32 halved while floor x ranks > 32; parts of at least chunk/8 on one host (chunk/2
// across hosts); doubled while a part exceeds chunk x 32 on one host (one chunk across hosts), up to 32.
#include <doctest/doctest.h>

#include "treering/model/collectives.hpp"
#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {
constexpr double KiB = 1024.0, MiB = 1024.0 * 1024.0;
}

TEST_CASE("NCCL's p2p channels: one NVLink host, 512 KiB chunks (parts 64 KiB to 16 MiB)") {
  // 8 ranks: floor 32 -> 16 -> 8 -> 4 (4 x 8 = 32, not over 32).
  CHECK(model::nccl_p2p_channels(4 * KiB, 8, 1, true) == 1);      // ceil(4 KiB / 64 KiB) = 1
  CHECK(model::nccl_p2p_channels(100 * KiB, 8, 1, true) == 2);    // ceil(100 / 64) = 2
  CHECK(model::nccl_p2p_channels(32 * MiB, 8, 1, true) == 4);     // 4 parts of 8 MiB
  CHECK(model::nccl_p2p_channels(64 * MiB, 8, 1, true) == 4);     // 4 parts of 16 MiB: not over
  CHECK(model::nccl_p2p_channels(128 * MiB, 8, 1, true) == 8);    // 32 MiB parts -> 8 of 16 MiB
  CHECK(model::nccl_p2p_channels(1024 * MiB, 8, 1, true) == 32);  // 64 parts of 16 MiB wanted, 32 at most
  // 2 ranks: floor 16.
  CHECK(model::nccl_p2p_channels(1 * MiB, 2, 1, true) == 16);
  CHECK(model::nccl_p2p_channels(512 * MiB, 2, 1, true) == 32);  // 32 MiB parts -> 32 of 16 MiB
}

TEST_CASE("NCCL's p2p channels: PCIe (128 KiB chunks, parts 16 KiB to 4 MiB) and several hosts (64 to 128 KiB)") {
  CHECK(model::nccl_p2p_channels(32 * MiB, 8, 1, false) == 8);  // floor 4: 8 MiB parts -> 8 of 4 MiB
  // 16 ranks on two hosts: floor 2; 1 MiB: 2 parts of 512 KiB -> 4 of 256 -> 8 of 128 KiB.
  CHECK(model::nccl_p2p_channels(1 * MiB, 16, 2, true) == 8);
  CHECK(model::nccl_p2p_channels(64 * KiB, 16, 2, true) == 1);     // ceil(64 / 64) = 1
  CHECK(model::nccl_p2p_channels(64 * MiB, 128, 16, true) == 32);  // floor 1, doubled to the 32 channels
}

TEST_CASE("a send inside a DGX H100 runs on its channels: 15 GB/s each, at most the link's 360 GB/s") {
  const topologies::Topology dgx = topologies::build_topology("dgx-h100", {1, {}});
  // The ring of 8 GPUs: a 16 MiB block (llama3.1-8b, 4,096 tokens x 4 KiB) gets 4 channels: 60 GB/s.
  const model::DecodeModel eight(dgx);
  CHECK(eight.p2p(0, 1).at(16 * MiB).bandwidth_Bps == doctest::Approx(4 * 15e9).scale(1e-12));
  CHECK(eight.p2p(0, 1).rate_cap_Bps(16 * MiB) == doctest::Approx(4 * 15e9).scale(1e-12));  // the simulator's cap
  // 2 GPUs: 16 channels, 240 GB/s; a gigabyte: 32 channels would move 480, the link's 360 GB/s binds.
  const model::DecodeModel two(dgx, {0, 1});
  CHECK(two.p2p(0, 1).at(16 * MiB).bandwidth_Bps == doctest::Approx(16 * 15e9).scale(1e-12));
  CHECK(two.p2p(0, 1).at(1e9).bandwidth_Bps == doctest::Approx(360e9).scale(1e-12));
  CHECK(two.p2p(0, 1).rate_cap_Bps(1e9) == 0);
  // The same on the collective model: `collective --op sendrecv` between 2 GPUs of one DGX, 16 MiB.
  model::CollectiveRequest request;
  request.op = model::CollectiveOp::sendrecv;
  request.bytes = 16 * MiB;
  const model::CollectiveCandidate chosen =
      model::estimate_collective(model::describe_group(dgx, {0, 1}), request).chosen;
  CHECK(chosen.transfer_s == doctest::Approx(16 * MiB / 240e9).scale(1e-12));
}

TEST_CASE("a fabric without p2p_channel_bandwidth keeps the link's rate") {
  const topologies::Topology pcie = topologies::build_topology("rtx4090-pcie", {1, {}});
  const model::DecodeModel model(pcie);
  CHECK(model.p2p(0, 1).at(16 * MiB).bandwidth_Bps == doctest::Approx(model.p2p(0, 1).bandwidth_Bps).scale(1e-12));
}
