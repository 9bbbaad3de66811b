// The MoE exchanges replayed on the routes: alone they take the model's time; an oversubscribed spine slows the
// low-latency kernel (its writes cross rails through the spines) and not the normal one (each stays on its rail).
#include <doctest/doctest.h>

#include <string>

#include "treering/sim/layout_replay.hpp"
#include "treering/sim/moe_replay.hpp"
#include "treering/model/step.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

struct Case {
  topologies::Topology topology;
  model::CommGroup group;
  model::MoeExchange exchange;
};

Case exchange_on(const std::string& cluster, int nodes, model::EpKernel kernel,
                 const std::string& oversubscription = "1", model::MoeOp op = model::MoeOp::dispatch,
                 const std::string& radix = "64") {
  topologies::Topology topology = topologies::build_topology(
      cluster,
      {nodes, std::nullopt, {{"network.oversubscription", oversubscription}, {"network.switch_radix", radix}}});
  model::CommGroup group = model::describe_group(topology);
  model::MoeExchangeRequest request;
  request.kernel = kernel;
  request.op = op;
  request.tokens_per_gpu = 128;
  model::MoeExchange exchange =
      model::estimate_moe_exchange(topology, group, model::find_workload("deepseek-v3"), request);
  return {std::move(topology), std::move(group), exchange};
}

}  // namespace

TEST_CASE("low-latency alone on its routes: the busiest GPU's NIC link paces it, as the model says") {
  // Every copy crosses the sender's GPU -> NIC link and the receiver's NIC -> GPU link (50 GB/s x 0.92); the
  // busiest receiver (rank 0) takes busiest_factor x 128 x 8 x 7,408 B on its link, the most any link carries:
  // latency + that / 46 GB/s, the model's time.
  for (int nodes : {1, 2, 4}) {
    CAPTURE(nodes);
    const Case c = exchange_on("dgx-h100", nodes, model::EpKernel::low_latency);
    const sim::SimulatedCollective simulated = sim::simulate_moe_exchange(c.topology, c.group, c.exchange);
    CHECK(simulated.time_s == doctest::Approx(c.exchange.time_s).epsilon(1e-6).scale(1e-12));
    CHECK(simulated.flows == 64LL * nodes * nodes);  // every pair, each GPU to itself too
    // that link moves bytes for the transfer and waits through the latency
    CHECK(simulated.busiest_utilisation ==
          doctest::Approx(c.exchange.transfer_s / c.exchange.time_s).epsilon(1e-6).scale(1e-12));
  }
}

TEST_CASE("combine replays the dispatch's flows backwards: the busiest GPU sends") {
  const Case c = exchange_on("dgx-h100", 2, model::EpKernel::low_latency, "1", model::MoeOp::combine);
  CHECK(sim::simulate_moe_exchange(c.topology, c.group, c.exchange).time_s ==
        doctest::Approx(c.exchange.time_s).epsilon(1e-6).scale(1e-12));
}

TEST_CASE("an oversubscribed spine slows the low-latency kernel, which crosses rails, and not the normal one") {
  // dgx-h100 is rail-optimised: NIC r of every node on rail r's leaf. With 16-port switches a rail's leaf takes
  // the 8 nodes' NICs at 1:1 (8 ports down, 8 up) and at 4:1 (12 down, 4 up, 8 used). A low-latency write to
  // another rail goes leaf -> spine -> leaf: 7 of every 8 copies, 8 x 7/8 x 128 x 8 x 7,408 B = 53.1 MB a leaf
  // over 4 uplinks of 46 GB/s: 289 us (+ latency), where at 1:1 each NIC's own link paces it (~184 us). The
  // normal kernel writes to the same rail only, then forwards over NVLink, so its RDMA never leaves the leaf.
  const Case ll_flat = exchange_on("dgx-h100", 8, model::EpKernel::low_latency, "1", model::MoeOp::dispatch, "16");
  const Case ll_over = exchange_on("dgx-h100", 8, model::EpKernel::low_latency, "4", model::MoeOp::dispatch, "16");
  const double flat_s = sim::simulate_moe_exchange(ll_flat.topology, ll_flat.group, ll_flat.exchange).time_s;
  const double over_s = sim::simulate_moe_exchange(ll_over.topology, ll_over.group, ll_over.exchange).time_s;
  CHECK(over_s == doctest::Approx(53.1e6 / (4 * 46e9) + ll_over.exchange.latency_s).epsilon(0.05).scale(1e-12));
  CHECK(over_s > 1.5 * flat_s);
  CHECK(ll_over.exchange.time_s == doctest::Approx(ll_flat.exchange.time_s).scale(1e-12));  // the model does not see it
  const Case normal_flat = exchange_on("dgx-h100", 8, model::EpKernel::normal, "1", model::MoeOp::dispatch, "16");
  const Case normal_over = exchange_on("dgx-h100", 8, model::EpKernel::normal, "4", model::MoeOp::dispatch, "16");
  CHECK(
      sim::simulate_moe_exchange(normal_over.topology, normal_over.group, normal_over.exchange).time_s ==
      doctest::Approx(sim::simulate_moe_exchange(normal_flat.topology, normal_flat.group, normal_flat.exchange).time_s)
          .epsilon(1e-9)
          .scale(1e-12));
}

TEST_CASE("two GPUs on one NIC: the model halves each GPU's rate; the replay loops their own copies back") {
  // topologies/examples/h100-fat-tree.yaml: 4 NICs for 8 GPUs; the model gives a GPU 25 GB/s x 0.92 = 23 GB/s and
  // charges it every copy: latency + busiest x 128 x 8 x 7,408 B / 23 GB/s. The replay lets the copies between the
  // two GPUs of a NIC, and to themselves, loop back inside it (2 of the 16 ranks); the rest share the NIC's link to
  // its leaf at 46 GB/s: into NIC 0, the busiest GPU's (busiest x 14/16 of its bytes) and its neighbour's (14/16),
  // latency + (busiest + 1) x 14/16 x 7,585,792 B / 46 GB/s, about 1/8 under the model's.
  const std::string file = std::string(TREERING_SOURCE_DIR) + "/topologies/examples/h100-fat-tree.yaml";
  const Case shared = exchange_on(file, 2, model::EpKernel::low_latency);
  const model::MoeExchange& x = shared.exchange;
  CHECK(x.nic_Bps == doctest::Approx(23e9).scale(1e-12));
  const double simulated_s = sim::simulate_moe_exchange(shared.topology, shared.group, x).time_s;
  const double loopback_s = x.latency_s + (x.routing.busiest_factor + 1) * 14.0 / 16 * x.nic_bytes_per_gpu / 46e9;
  CHECK(simulated_s == doctest::Approx(loopback_s).epsilon(0.01).scale(1e-12));
  CHECK(simulated_s < x.time_s);
}

TEST_CASE("the MoE replay runs on the event loop only") {
  const Case c = exchange_on("dgx-h100", 1, model::EpKernel::low_latency);
  sim::ReplayOptions simgrid;
  simgrid.in_simgrid = true;
  CHECK_THROWS_AS(sim::simulate_moe_exchange(c.topology, c.group, c.exchange, simgrid), topologies::InputError);
}

TEST_CASE("a layer with EP replays its exchanges with every EP rank: the model's alone, slower over a 4:1 spine") {
  // deepseek-v3, TP 8 attention x 8 replicas, EP 64 on 8 DGX H100 (16-port switches, as above): 64 sequences a
  // replica, 8 tokens a GPU dispatched.
  model::Workload w = model::find_workload("deepseek-v3");
  w.batch = 64;
  auto replayed = [&](const std::string& oversubscription) {
    const topologies::Topology topology = topologies::build_topology(
        "dgx-h100",
        {8, std::nullopt, {{"network.oversubscription", oversubscription}, {"network.switch_radix", "16"}}});
    model::Layout layout{8, 1, 8};
    layout.experts.ep = 64;
    const model::LayoutModel layouts(topology, model::place_layout(topology, layout));
    const model::LayoutAttention attention = layouts.attention(model::DecodeAlgorithm::tree, w, 4096);
    const model::StepResult step =
        model::evaluate_step(layouts, attention, model::DecodeAlgorithm::tree, w, 4096, model::Scope::layer);
    const sim::LayoutReplay replay = sim::replay_layout(layouts, model::DecodeAlgorithm::tree, w, 4096, {}, step, {});
    return std::pair{step, replay};
  };
  const auto [flat_step, flat] = replayed("1");
  REQUIRE(flat.dispatch);
  CHECK(flat_step.experts->tokens_per_gpu == 8);
  CHECK(flat.dispatch->time_s == doctest::Approx(flat_step.experts->dispatch.time_s).epsilon(1e-6).scale(1e-12));
  CHECK(flat.combine->time_s == doctest::Approx(flat_step.experts->combine.time_s).epsilon(1e-6).scale(1e-12));
  // the replayed layer: attention, the TP group's reduce-scatter and all-gather, the parts, then the exchanges
  CHECK(*flat.layer_s == doctest::Approx(flat_step.layer_s).epsilon(0.02).scale(1e-12));
  const auto [over_step, over] = replayed("4");
  CHECK(over_step.layer_s == doctest::Approx(flat_step.layer_s).scale(1e-12));  // the model does not see the spine
  CHECK(over.dispatch->time_s > 1.3 * flat.dispatch->time_s);
  CHECK(*over.layer_s > *flat.layer_s);
}
