// Implementation profiles in the model and the simulator: every preset's plan takes the same time in both, and
// the paper's Llama profile adds the work its code does, counted by hand.
#include <doctest/doctest.h>

#include "treering/sim/replay.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

model::PlanOptions with(const char* impl) {
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(topologies::load_impl_profile(impl));
  return options;
}

}  // namespace

TEST_CASE("each preset profile: the model and the simulator replay the same plan to the same latency") {
  // Two H100s of one node, alone on their NVLink ports: nothing is shared, so the engines agree exactly.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology, {0, 1});
  for (const topologies::ImplProfile& profile : topologies::impl_presets()) {
    for (model::DecodeAlgorithm algorithm : {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree}) {
      CAPTURE(profile.name);
      CAPTURE(model::to_string(algorithm));
      const model::DecodePlan plan =
          decode.plan(algorithm, model::find_workload("llama3.1-8b"), 20000, with(profile.name.c_str()));
      CHECK(plan.costs.profile_or_default().name == profile.name);
      const double modelled_s = decode.evaluate(plan).latency_s;
      CHECK(sim::replay_plan(decode, plan).latency_s == doctest::Approx(modelled_s).scale(1e-12).epsilon(1e-9));
    }
  }
}

TEST_CASE("paper-torch-llama: the code's extra work per layer, counted by hand") {
  // llama3.1-8b: 8 KV heads x 128 x 2 B x 2 (K and V) = 4096 B per token and layer, 32 query heads (expansion 4).
  // 20,000 tokens on 2 GPUs: 10,000 per shard = 40.96 MB cached, 163.84 MB expanded.
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology, {0, 1});
  const model::DecodePlan ring =
      decode.plan(model::DecodeAlgorithm::ring, model::find_workload("llama3.1-8b"), 20000, with("paper-torch-llama"));
  CHECK(ring.sizes.kv_bytes_per_token == 4 * 4096.0);  // the ring sends the expanded blocks
  auto phase = [&](const std::string& label) -> const model::Phase& {
    for (const model::Phase& p : ring.phases) {
      if (p.label.find(label) != std::string::npos) return p;
    }
    FAIL("no phase " << label);
    return ring.phases.front();
  };
  CHECK(phase("RoPE").bytes == doctest::Approx(5 * 40.96e6).scale(1e-12));  // 5 x the cached K and V
  CHECK(phase("repeat_kv").bytes ==
        doctest::Approx(40.96e6 + 163.84e6).scale(1e-12));  // read them, write the expansion
  CHECK(phase("pad K and V").bytes == doctest::Approx(6 * 163.84e6).scale(1e-12));
  CHECK(phase("pad K and V").ranks == topologies::ExtraRanks::others);
  CHECK(phase("torch.cat").ranks == topologies::ExtraRanks::last);
  // RoPE's time: 5 launches of 3.8 us and 204.8 MB at 3.35 TB/s x 0.80.
  const model::DecodeResult r = decode.evaluate(ring);
  for (const model::PhaseTime& t : r.phases) {
    if (t.label.find("RoPE") != std::string::npos)
      CHECK(t.time_s == doctest::Approx(5 * 3.8e-6 + 204.8e6 / (3.35e12 * 0.8)).scale(1e-12));
  }
  // Host round trips: the barrier's and the ring's .item(), 5.8 us each.
  CHECK(r.breakdown.host_s == doctest::Approx(2 * 5.8e-6).scale(1e-12));
  // The tree makes only the barrier's, and none of the ring's copies.
  const model::DecodeResult tree = decode.predict(model::DecodeAlgorithm::tree, model::find_workload("llama3.1-8b"),
                                                  20000, with("paper-torch-llama"));
  CHECK(tree.breakdown.host_s == doctest::Approx(5.8e-6).scale(1e-12));
}

TEST_CASE("paper-jax-microbench: the first call is paid once per timed call, not per layer") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology, {0, 1});
  const model::DecodeResult plain =
      decode.predict(model::DecodeAlgorithm::tree, model::find_workload("llama3.1-8b"), 20000);
  const model::DecodeResult first = decode.predict(model::DecodeAlgorithm::tree, model::find_workload("llama3.1-8b"),
                                                   20000, with("paper-jax-microbench"));
  CHECK(first.latency_s == doctest::Approx(plain.latency_s + 1.02).scale(1e-12));
  CHECK(first.token_s == doctest::Approx(plain.token_s + 1.02).scale(1e-12));  // 32 layers, one first call
}
