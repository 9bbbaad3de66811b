// An eager framework's host dispatch bounds a step from below (ImplProfile::eager_dispatch_s): the host issues
// every kernel of the token one by one, so a step of short kernels takes kernels x dispatch, not their GPU time.
#include <doctest/doctest.h>

#include <memory>

#include "treering/model/decode.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

model::PlanOptions with(const topologies::ImplProfile& profile) {
  model::PlanOptions options;
  options.impl = std::make_shared<const topologies::ImplProfile>(profile);
  return options;
}

}  // namespace

TEST_CASE("kernels per layer: the plan's own kernels, the profile's extra work and the layer's other kernels") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology);  // 8 GPUs
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  const topologies::ImplProfile paper = topologies::load_impl_profile("paper-torch-llama");
  // Tree: attention 1, three all-reduces 3, rescale and divide 2; paper-torch-llama adds cat 2, RoPE 5,
  // repeat_kv 2, the broadcast 1 and the barrier 1, and 32 other kernels: 6 + 11 + 32 = 49.
  CHECK(model::kernels_per_layer(decode.plan(model::DecodeAlgorithm::tree, llama, 32000, with(paper))) == 49);
  // Ring on 8 ranks: 8 rounds of attention and merge, 7 sends = 23, then normalising o 1; the same 11 + 32, plus
  // the ring's length all-reduce 1, its contiguous copies 2 and the padding 5: 24 + 11 + 8 + 32 = 75.
  CHECK(model::kernels_per_layer(decode.plan(model::DecodeAlgorithm::ring, llama, 32000, with(paper))) == 75);
}

TEST_CASE("eager dispatch: a step takes at least its kernels' dispatch, plus its host round trips") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel decode(topology);
  const model::Workload& llama = model::find_workload("llama3.1-8b");
  topologies::ImplProfile paper = topologies::load_impl_profile("paper-torch-llama");
  paper.eager_dispatch_s.reset();
  const model::DecodeResult gpu_bound = decode.predict(model::DecodeAlgorithm::tree, llama, 32000, with(paper));
  // 49 kernels of 25 us and the barrier's 5.8 us round trip per layer, 32 layers: 32 x 1.2308 ms = 39.39 ms, above
  // the GPU's 16.9 ms (its token without the floor), so the floor is the token's time.
  paper.eager_dispatch_s = 25e-6;
  const model::DecodeResult host_bound = decode.predict(model::DecodeAlgorithm::tree, llama, 32000, with(paper));
  CHECK(gpu_bound.token_s < 20e-3);
  CHECK(host_bound.token_s == doctest::Approx(32 * (49 * 25e-6 + 5.8e-6)).scale(1e-12));
  // The ring at 32k moves 65.5 MB per round: its GPU time (~270 ms) stays above its 32 x 75 x 25 us = 60 ms.
  const model::DecodeResult ring = decode.predict(model::DecodeAlgorithm::ring, llama, 32000, with(paper));
  paper.eager_dispatch_s.reset();
  CHECK(ring.token_s == decode.predict(model::DecodeAlgorithm::ring, llama, 32000, with(paper)).token_s);
  CHECK(ring.token_s > 32 * 75 * 25e-6);
}
