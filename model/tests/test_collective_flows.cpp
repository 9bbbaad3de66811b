// The flows of the collective algorithms: hand-counted patterns, and payload per tier equal to the model's
// volumes for every algorithm that can run.
#include <doctest/doctest.h>

#include <map>
#include <stdexcept>

#include "treering/model/collective_flows.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;
using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::Protocol;

namespace {

struct Group {
  model::CommGroup group;
  std::vector<int> domains;
};

Group group_of(const std::string& cluster, int nodes, std::vector<int> gpus = {}) {
  const topologies::Topology topology = topologies::build_topology(cluster, {nodes, {}});
  Group g{model::describe_group(topology, gpus), {}};
  for (int gpu : g.group.gpus) g.domains.push_back(topology.domain_of_gpu(gpu));
  return g;
}

model::CollectiveSchedule schedule(const Group& g, CollectiveOp op, double bytes, CollectiveAlgorithm algorithm,
                                   Protocol protocol = Protocol::simple) {
  model::CollectiveRequest request;
  request.op = op;
  request.bytes = bytes;
  request.algorithm = algorithm;
  request.protocol = protocol;
  const model::CollectiveEstimate estimate = model::estimate_collective(g.group, request);
  return model::collective_schedule(g.group, g.domains, op, bytes, estimate.chosen);
}

// (from, to) -> payload bytes summed
std::map<std::pair<int, int>, double> edges(const model::CollectiveSchedule& s) {
  std::map<std::pair<int, int>, double> out;
  for (const auto& f : s.flows) out[{f.from, f.to}] += f.bytes;
  return out;
}

}  // namespace

TEST_CASE("ring all-reduce on 4 GPUs of one node: 4 edges of 2 x 3/4 x S") {
  const Group g = group_of("dgx-a100", 1, {0, 1, 2, 3});
  const auto s = schedule(g, CollectiveOp::allreduce, 1000, CollectiveAlgorithm::ring);
  REQUIRE(s.flows.size() == 4);
  for (const auto& f : s.flows) {
    CHECK(f.to == (f.from + 1) % 4);
    CHECK(f.bytes == doctest::Approx(1500).scale(1e-12));  // 2 x (4 - 1) / 4 x 1000
    CHECK(f.wire_bytes == doctest::Approx(1500).scale(1e-12));
  }
  // LL: 8 data bytes per 16 on the wire.
  const auto ll = schedule(g, CollectiveOp::allreduce, 1000, CollectiveAlgorithm::ring, Protocol::ll);
  CHECK(ll.flows.front().wire_bytes == doctest::Approx(3000).scale(1e-12));
}

TEST_CASE("tree all-reduce on a chain of 3 GPUs: two chains of S/2, both ways") {
  // Tree 0 towards GPU 0: 1->0, 2->1 up and back; tree 1 towards GPU 2: 1->2, 0->1 up and back. Each
  // direction of each edge: S/2 from either tree = S; GPU 1 sends 4 flows of S/2 = 2 S.
  const Group g = group_of("dgx-a100", 1, {0, 1, 2});
  const auto s = schedule(g, CollectiveOp::allreduce, 800, CollectiveAlgorithm::tree);
  CHECK(s.flows.size() == 8);
  const auto e = edges(s);
  CHECK(e.size() == 4);
  for (auto [from, to] : {std::pair{0, 1}, {1, 0}, {1, 2}, {2, 1}})
    CHECK(e.at({from, to}) == doctest::Approx(800).scale(1e-12));
}

TEST_CASE("tree across 4 one-GPU domains: heap trees, tree 1 mirrored") {
  // 4 nodes of 8 GPUs, one GPU of each (GPU 0 of each node): tree 0 edges 1->0, 2->0, 3->1; tree 1 over the
  // mirrored order 3, 2, 1, 0: 2->3, 1->3, 0->2. Edges {0,2} and {1,3} are in both trees (S/2 + S/2 each way),
  // {0,1} and {2,3} in one. Rank 0 sends S/2 to 1 and S to 2 = 1.5 S.
  const Group g = group_of("dgx-h100", 4, {0, 8, 16, 24});
  const auto s = schedule(g, CollectiveOp::allreduce, 100, CollectiveAlgorithm::tree);
  const auto e = edges(s);
  CHECK(e.size() == 8);
  for (auto [from, to] : {std::pair{0, 1}, {2, 3}}) {
    CHECK(e.at({from, to}) == doctest::Approx(50).scale(1e-12));
    CHECK(e.at({to, from}) == doctest::Approx(50).scale(1e-12));
  }
  for (auto [from, to] : {std::pair{0, 2}, {1, 3}}) {
    CHECK(e.at({from, to}) == doctest::Approx(100).scale(1e-12));
    CHECK(e.at({to, from}) == doctest::Approx(100).scale(1e-12));
  }
  double rank0 = 0;
  for (const auto& f : s.flows) rank0 += f.from == 0 ? f.bytes : 0.0;
  CHECK(rank0 == doctest::Approx(150).scale(1e-12));
}

TEST_CASE("ring across nodes: one channel per NIC for large buffers, each crossing every node boundary") {
  // 2 DGX H100 (8 NICs each), 1 MiB: 8 channels (16 x 64 KiB would allow 16), each a ring over 16 GPUs
  // carrying 2 x 15/16 x S / 8. Each channel crosses twice (node 0 -> 1 and back): 16 cross flows, one leaving
  // from each GPU.
  const Group g = group_of("dgx-h100", 2);
  const double S = 1 << 20;
  const auto s = schedule(g, CollectiveOp::allreduce, S, CollectiveAlgorithm::ring);
  CHECK(s.flows.size() == 8 * 16);
  int crossing = 0;
  std::map<int, int> leaving;
  for (const auto& f : s.flows) {
    CHECK(f.bytes == doctest::Approx(2.0 * 15 / 16 * S / 8).scale(1e-12));
    if (g.domains[static_cast<size_t>(f.from)] != g.domains[static_cast<size_t>(f.to)]) {
      ++crossing;
      ++leaving[f.from];
    }
  }
  CHECK(crossing == 16);
  CHECK(leaving.size() == 16);
  // 128 KiB: two channels of 64 KiB; 16 KB: one, as NCCL narrows small collectives.
  CHECK(schedule(g, CollectiveOp::allreduce, 131072, CollectiveAlgorithm::ring).flows.size() == 2 * 16);
  CHECK(schedule(g, CollectiveOp::allreduce, 16000, CollectiveAlgorithm::ring).flows.size() == 16);
}

TEST_CASE("payload per tier equals the model's volumes for every algorithm") {
  // Whole nodes, and uneven groups: 8 + 4 GPUs, 6 GPUs over 2 nodes (3 + 3), 3 GPUs over 3 nodes.
  const std::vector<std::vector<int>> subsets{
      {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {0, 1, 2, 8, 9, 10}, {0, 8, 16}};
  for (const std::string cluster : {"dgx-h100", "dgx-a100", "mi300x"}) {
    for (int nodes : {1, 2, 4}) {
      for (const std::vector<int>& gpus : subsets) {
        if (!gpus.empty() && gpus.back() >= 8 * nodes) continue;
        const Group g = group_of(cluster, nodes, gpus);
        for (CollectiveOp op : {CollectiveOp::allreduce, CollectiveOp::allgather, CollectiveOp::reduce_scatter,
                                CollectiveOp::broadcast}) {
          for (int a = 0; a < static_cast<int>(CollectiveAlgorithm::p2p); ++a) {
            model::CollectiveRequest request;
            request.op = op;
            request.bytes = 1 << 20;
            request.algorithm = static_cast<CollectiveAlgorithm>(a);
            model::CollectiveEstimate estimate;
            try {
              estimate = model::estimate_collective(g.group, request);
            } catch (const std::invalid_argument&) {
              continue;  // cannot run here
            }
            CAPTURE(cluster);
            CAPTURE(nodes);
            const std::string what =
                std::string(model::to_string(op)) + " " + model::to_string(request.algorithm.value());
            CAPTURE(what);
            const auto s = model::collective_schedule(g.group, g.domains, op, request.bytes, estimate.chosen);
            double intra = 0, inter = 0;
            for (const auto& f : s.flows) {
              (g.domains[static_cast<size_t>(f.from)] != g.domains[static_cast<size_t>(f.to)] ? inter : intra) +=
                  f.bytes;
              CHECK(f.wire_bytes >= f.bytes * (1 - 1e-12));
            }
            CHECK(intra == doctest::Approx(estimate.scale_up_bytes_per_gpu * g.group.ranks).scale(1e-12).epsilon(1e-9));
            CHECK(inter ==
                  doctest::Approx(estimate.scale_out_bytes_per_gpu * g.group.ranks).scale(1e-12).epsilon(1e-9));
          }
        }
      }
    }
  }
}

TEST_CASE("in-switch reduction: wire stretched to the in-switch rate; bad input refused") {
  const Group g = group_of("dgx-h100", 1);
  const auto s = schedule(g, CollectiveOp::allreduce, 1000, CollectiveAlgorithm::nvls, Protocol::simple);
  REQUIRE(s.flows.size() == 8);
  // Alone, a flow takes wire / pair rate = S / in-switch rate, the model's transfer time.
  CHECK(s.flows.front().wire_bytes / g.group.scale_up_pair_Bps ==
        doctest::Approx(1000 / g.group.in_switch_Bps).scale(1e-12));
  CHECK(s.flows.front().bytes == 1000);
  CHECK_THROWS_AS(model::collective_schedule(g.group, {0, 0}, CollectiveOp::allreduce, 10, s.chosen), std::logic_error);
  model::CollectiveCandidate p2p = s.chosen;
  p2p.algorithm = CollectiveAlgorithm::p2p;
  CHECK_THROWS_AS(model::collective_schedule(g.group, g.domains, CollectiveOp::allreduce, 10, p2p),
                  std::invalid_argument);
}
