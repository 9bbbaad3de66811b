// A collective replayed flow by flow (sim/collective_replay.hpp) against the collective model, where no link is
// shared beyond what the model counts: one DGX H100 and two (each GPU on a NIC of its own), every operation,
// latency- and bandwidth-bound sizes. The replay moves the model's pick's flows after its latency, capped at its
// rate, so alone they take the model's time; ring and tree channels spread over NICs and NVLink a little more
// evenly than the model's min(bus, NICs), and a tree's chains of two move S where NCCL's formula charges 2 S
// (sim/README.md): the replay is never slower, and at most 2.5 % faster in these cases (2.0 % seen).
#include <doctest/doctest.h>

#include "treering/sim/collective_replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("collective replayed = the collective model where no link is shared beyond what the model counts") {
  for (int nodes : {1, 2}) {
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
    const model::CommGroup group = model::describe_group(topology);
    for (model::CollectiveOp op :
         {model::CollectiveOp::allreduce, model::CollectiveOp::allgather, model::CollectiveOp::reduce_scatter,
          model::CollectiveOp::broadcast, model::CollectiveOp::alltoall}) {
      for (double bytes : {4096.0, 1048576.0, 268435456.0}) {
        CAPTURE(nodes);
        CAPTURE(model::to_string(op));
        CAPTURE(bytes);
        model::CollectiveRequest request;
        request.op = op;
        request.bytes = bytes;
        const model::CollectiveEstimate estimate = model::estimate_collective(group, request);
        const sim::SimulatedCollective replay = sim::simulate_collective(topology, group, op, bytes, estimate.chosen);
        CHECK(replay.time_s <= estimate.chosen.time_s * (1 + 1e-9));
        CHECK(replay.time_s >= estimate.chosen.time_s * 0.975);
        CHECK(replay.flows > 0);
      }
    }
  }
}
