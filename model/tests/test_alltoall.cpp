// All-to-all as NCCL's grouped send/recv runs it (collectives.hpp), on hand-derived cases: NCCL 2.30.7's
// constants in microseconds (ring/p2p row: base LL 6.6, Simple 8.4; NVLink hop LL 0.6, Simple 3.4; network hop
// Simple 14), dgx-h100 rates (NVSwitch pair 360 GB/s, NDR NIC 46 GB/s effective).
#include <doctest/doctest.h>

#include "treering/model/collective_flows.hpp"
#include "treering/model/collectives.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::Protocol;

namespace {

model::CommGroup dgx(int nodes) { return model::describe_group(topologies::build_topology("dgx-h100", {nodes, {}})); }

model::CollectiveEstimate alltoall(const model::CommGroup& group, double bytes) {
  model::CollectiveRequest request;
  request.op = CollectiveOp::alltoall;
  request.bytes = bytes;
  return model::estimate_collective(group, request);
}

}  // namespace

TEST_CASE("all-to-all across 2 nodes: Simple, one network hop plus the proxy's post per network peer") {
  // 16 ranks, S = 16 KiB: 1 KiB per peer, 8 peers on the other node. Latency 8.4 + 14 + 5.0 + 8 x 3 = 51.4 us (the
  // clear-to-send from the receivers, posted at once; the first post hands the GPU a shared buffer slot, each further
  // one posts another peer's send; the node's 7 peers by LL: 6.6 + 0.6 = 7.2 us, in parallel). Bytes: 8 KiB through the
  // NIC, 8192 / 46e9 s; 7 KiB through the port at LL's half of 360 GB/s, 7168 / 180e9 s: the NIC's is the longer.
  const auto estimate = alltoall(dgx(2), 16384);
  CHECK(estimate.chosen.algorithm == CollectiveAlgorithm::p2p);
  CHECK(estimate.chosen.protocol == Protocol::simple);
  CHECK(estimate.chosen.latency_s == doctest::Approx(51.4e-6).scale(1e-12));
  CHECK(estimate.chosen.time_s == doctest::Approx(51.4e-6 + 8192 / 46e9).scale(1e-12));
  CHECK(estimate.chosen.inter_node_s == doctest::Approx(51.4e-6 + 8192 / 46e9).scale(1e-12));
  CHECK(estimate.scale_out_bytes_per_gpu == 8192);
  CHECK(estimate.scale_up_bytes_per_gpu == 7168);
  CHECK(estimate.candidates.size() == 1);  // NCCL's protocol follows from size and hop: no choice
  // nccl-tests' bus factor (n-1)/n.
  CHECK(estimate.bus_bandwidth_Bps == doctest::Approx(estimate.algorithm_bandwidth_Bps * 15 / 16).scale(1e-12));
}

TEST_CASE("all-to-all inside a node: LL up to 16 KiB per peer, Simple above") {
  // 8 ranks. 8 x 16 KiB: 16 KiB per peer, LL: 6.6 + 0.6 = 7.2 us. The 7 sends run at once, each on the one
  // channel NCCL gives 16 KiB among 8 ranks (nccl_p2p_channels: under a 64 KiB part) at 15 GB/s: 7 x 15 =
  // 105 GB/s, under LL's 180 GB/s: + 7 x 16384 B / 105 GB/s.
  const auto small = alltoall(dgx(1), 8 * 16384.0);
  CHECK(small.chosen.protocol == Protocol::ll);
  CHECK(small.chosen.time_s == doctest::Approx(7.2e-6 + 7 * 16384 / 105e9).scale(1e-12));
  CHECK(small.scale_out_bytes_per_gpu == 0);
  // 8 x 32 KiB: Simple, 8.4 + 3.4 = 11.8 us; again one channel per peer: + 7 x 32768 B / 105 GB/s.
  const auto large = alltoall(dgx(1), 8 * 32768.0);
  CHECK(large.chosen.protocol == Protocol::simple);
  CHECK(large.chosen.time_s == doctest::Approx(11.8e-6 + 7 * 32768 / 105e9).scale(1e-12));
}

TEST_CASE("all-to-all's flows: S / n to every other rank, LL's wire inside a node for small messages") {
  const model::CommGroup group = dgx(2);
  const auto estimate = alltoall(group, 16384);
  std::vector<int> domains;
  for (int r = 0; r < 16; ++r) domains.push_back(r / 8);
  const auto schedule = model::collective_schedule(group, domains, CollectiveOp::alltoall, 16384, estimate.chosen);
  REQUIRE(schedule.flows.size() == 16 * 15);
  double wire_inside = 0, wire_across = 0;
  for (const auto& flow : schedule.flows) {
    CHECK(flow.bytes == 1024);
    (domains[flow.from] == domains[flow.to] ? wire_inside : wire_across) += flow.wire_bytes;
  }
  CHECK(wire_inside == 16 * 7 * 2048.0);  // x2: LL's 8 data bytes per 16
  CHECK(wire_across == 16 * 8 * 1024.0);
}
