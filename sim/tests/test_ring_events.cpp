// The ring's own event loop (sim/src/ring_events.hpp) against SimGrid's actors replaying every round of the
// same plan: the same transfers, every rank's finish, the last rank's breakdown and phases, the same timeline,
// to 1e-9, on clusters with and without links shared between ring edges.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "treering/sim/replay.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

sim::ReplayOptions in_simgrid(sim::ReplayOptions options) {
  options.skip_steady_rounds = false;  // every round, as the event loop replays them
  options.ring_in_simgrid = true;
  return options;
}

void check_spans(std::vector<sim::Activity> a, std::vector<sim::Activity> b, double scale_s) {
  auto key = [](const sim::Activity& x) { return std::tuple(x.rank, static_cast<int>(x.kind), x.start_s, x.end_s, x.peer); };
  auto by_key = [&](const sim::Activity& x, const sim::Activity& y) { return key(x) < key(y); };
  std::sort(a.begin(), a.end(), by_key);
  std::sort(b.begin(), b.end(), by_key);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].rank == b[i].rank);
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].peer == b[i].peer);
    CHECK(a[i].phase == b[i].phase);
    CHECK(a[i].start_s == doctest::Approx(b[i].start_s).epsilon(1e-9).scale(scale_s));
    CHECK(a[i].end_s == doctest::Approx(b[i].end_s).epsilon(1e-9).scale(scale_s));
  }
}

// The event loop's replay of `plan` is SimGrid's, to 1e-9 of the latency.
void check_same_as_simgrid(const model::DecodeModel& model, const model::DecodePlan& plan, sim::ReplayOptions options = {}) {
  options.skip_steady_rounds = false;  // equal blocks too: SimGrid's skip would take them otherwise
  const sim::ReplayResult events = sim::replay_plan(model, plan, options);
  const sim::ReplayResult simgrid = sim::replay_plan(model, plan, in_simgrid(options));
  const double scale_s = simgrid.latency_s;
  CHECK(events.transfers_simulated == simgrid.transfers_simulated);
  CHECK(events.latency_s == doctest::Approx(simgrid.latency_s).epsilon(1e-9));
  REQUIRE(events.rank_finish_s.size() == simgrid.rank_finish_s.size());
  for (size_t rank = 0; rank < events.rank_finish_s.size(); ++rank) {
    CHECK(events.rank_finish_s[rank] == doctest::Approx(simgrid.rank_finish_s[rank]).epsilon(1e-9));
  }
  const sim::RankTimes& e = events.critical;
  const sim::RankTimes& s = simgrid.critical;
  CHECK(e.rank == s.rank);
  CHECK(e.compute_s == doctest::Approx(s.compute_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.wait_intra_s == doctest::Approx(s.wait_intra_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.wait_inter_s == doctest::Approx(s.wait_inter_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.send_s == doctest::Approx(s.send_s).epsilon(1e-9).scale(scale_s));
  CHECK(e.overlapped_s == doctest::Approx(s.overlapped_s).epsilon(1e-9).scale(scale_s));
  REQUIRE(e.phase_s.size() == s.phase_s.size());
  for (size_t phase = 0; phase < e.phase_s.size(); ++phase) {
    CHECK(e.phase_s[phase] == doctest::Approx(s.phase_s[phase]).epsilon(1e-9).scale(scale_s));
  }
  check_spans(events.activities, simgrid.activities, scale_s);
}

model::Workload mha16() { return model::find_workload("paper-mha16"); }

}  // namespace

TEST_CASE("ring event loop: uneven blocks on NVSwitch nodes across a rail network, as SimGrid replays them") {
  for (int nodes : {1, 2, 3}) {
    const topologies::Topology topology = topologies::build_topology("dgx-h100", {nodes, {}});
    const model::DecodeModel model(topology);
    CAPTURE(nodes);
    check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'000'003));
  }
}

TEST_CASE("ring event loop: PCIe boxes whose ring edges share switch uplinks (max-min sharing)") {
  const topologies::Topology topology = topologies::build_topology("rtx4090-pcie", {2, {}});
  const model::DecodeModel model(topology);
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 160'007));
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 16 * 10'000));  // equal blocks
}

TEST_CASE("ring event loop: the timeline recorded, without overlap, with host round trips and two exchanges") {
  const topologies::Topology topology = topologies::build_topology("dgx-a100", {2, {}});
  const model::DecodeModel model(topology);
  model::PlanOptions no_overlap;
  no_overlap.ring_overlap = false;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001, no_overlap), {true});
  model::DecodePlan busy_host = model.plan(model::DecodeAlgorithm::ring, mha16(), 900'001);
  busy_host.ring_step_host_s = 7e-6;
  busy_host.ring_exchanges_per_step = 2;
  check_same_as_simgrid(model, busy_host, {true});
}

TEST_CASE("ring event loop: empty blocks, mixed GPUs split by speed, pass-q") {
  const topologies::Topology dgx = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(dgx);
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 11), {true});  // 11 tokens, 16 GPUs
  model::Workload batched = mha16();
  batched.batch = 5;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::pass_q, batched, 640'003), {true});
  const topologies::Topology mixed = topologies::build_topology(std::string(TREERING_SOURCE_DIR) + "/topologies/examples/mixed-h100-h200.yaml");
  const model::DecodeModel mixed_model(mixed);
  model::PlanOptions by_speed;
  by_speed.split = model::TokenSplit::by_speed;
  check_same_as_simgrid(mixed_model, mixed_model.plan(model::DecodeAlgorithm::ring, mha16(), 2'000'000, by_speed));
}

TEST_CASE("ring event loop: a slow NIC, a cable down and a slow GPU") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {2, {}});
  const model::DecodeModel model(topology);
  sim::ReplayOptions options;
  sim::slow_nic(topology, 7, 0.25, options.degradation);
  options.degradation.gpu_slowdown[3] = 1.5;
  check_same_as_simgrid(model, model.plan(model::DecodeAlgorithm::ring, mha16(), 1'600'005), options);
}
