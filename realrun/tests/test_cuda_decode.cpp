// The cuda backend's decode on one GPU (the device pool lends single GPUs: NCCL across GPUs cannot run there):
// every algorithm it runs, on one rank and as 2, 3 and 4 loopback virtual ranks, within 1e-4 of the reference
// (the kernel's tolerance, test_split_kv_emulation.cpp) after a graph of several steps (each step must leave the
// same output), with every byte a loopback rank sends equal to the model's plan, rank by rank. The device's inputs
// equal the host's make_inputs bit for bit (the reference is computed from the host's). Skipped (gpu_main.cpp)
// without a usable device.
#include <doctest/doctest.h>

#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

const model::DecodeAlgorithm kCudaAlgorithms[] = {model::DecodeAlgorithm::ring, model::DecodeAlgorithm::tree,
                                                  model::DecodeAlgorithm::tree_fused, model::DecodeAlgorithm::tree_lse,
                                                  model::DecodeAlgorithm::allgather_merge};

}  // namespace

TEST_CASE("cuda decode on one GPU: every algorithm equals the reference, on one rank and on 2-4 loopback ranks") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, {0});
  const model::Workload& workload = model::find_workload("paper-mha16");
  const realrun::AttentionShape shape = realrun::shape_of(workload);
  for (long long seq_len : {3LL, 1001LL, 20000LL}) {
    const realrun::Inputs all = realrun::make_inputs(shape, realrun::dtype_of(workload), 0, seq_len, 7);
    const std::vector<double> reference = realrun::reference_attention(shape, realrun::dtype_of(workload), all.q.data(),
                                                                       all.k.data(), all.v.data(), seq_len);
    for (model::DecodeAlgorithm algorithm : kCudaAlgorithms) {
      CAPTURE(seq_len);
      CAPTURE(std::string(model::to_string(algorithm)));
      const model::DecodePlan one =
          model.plan(algorithm, workload, seq_len, realrun::plan_options(realrun::Backend::cuda));
      realrun::cuda::GpuTiming timing;
      timing.samples = 2;
      timing.max_steps_per_sample = 3;
      timing.timeout_s = 60;
      const realrun::cuda::GpuMeasurement single = realrun::cuda::measure_on_gpu(one, 0, nullptr, 7, timing);
      CHECK(realrun::max_relative_error(single.outputs.at(0).data(), reference, shape.head_dim) < 1e-4);
      CHECK(single.bytes_sent.at(0) == 0);  // one GPU sends nothing
      CHECK(single.step_s.size() == 2);
      for (int ranks : {2, 3, 4}) {
        CAPTURE(ranks);
        std::vector<int> gpus(static_cast<size_t>(ranks));
        std::iota(gpus.begin(), gpus.end(), 0);  // GPUs 0 ... P-1 of the node
        const model::DecodeModel wide(topology, gpus);
        // The loopback's collectives are rings of its own (cuda-loopback's plan options), not NCCL's pick.
        const model::DecodePlan plan =
            wide.plan(algorithm, workload, seq_len, realrun::plan_options(realrun::Backend::cuda_loopback));
        const realrun::cuda::GpuMeasurement run = realrun::cuda::measure_loopback(plan, 7, timing);
        const std::vector<double> model_bytes = model::bytes_sent_per_rank(plan);
        REQUIRE(run.outputs.size() == static_cast<size_t>(ranks));
        for (int r = 0; r < ranks; ++r) {
          CHECK(run.ranks[static_cast<size_t>(r)] == r);
          CHECK(realrun::max_relative_error(run.outputs[static_cast<size_t>(r)].data(), reference, shape.head_dim) <
                1e-4);
          CHECK(run.bytes_sent[static_cast<size_t>(r)] == model_bytes[static_cast<size_t>(r)]);
        }
        CHECK(run.step_s.size() == 2);
        CHECK(run.timing_note.find("share one GPU") != std::string::npos);
      }
    }
  }
}

TEST_CASE("cuda decode refuses the deployed combines and a loopback run without warm-up") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, {0, 1});
  const model::Workload& workload = model::find_workload("paper-mha16");
  const model::DecodePlan pass_q =
      model.plan(model::DecodeAlgorithm::pass_q, workload, 100, realrun::plan_options(realrun::Backend::cuda));
  CHECK_THROWS_AS(realrun::cuda::measure_loopback(pass_q, 7, {}), std::invalid_argument);
  const model::DecodePlan tree =
      model.plan(model::DecodeAlgorithm::tree, workload, 100, realrun::plan_options(realrun::Backend::cuda));
  realrun::cuda::GpuTiming no_warmup;
  no_warmup.warmup = 0;
  CHECK_THROWS_AS(realrun::cuda::measure_loopback(tree, 7, no_warmup), std::invalid_argument);
}

TEST_CASE("cuda decode of llama3.1-8b (GQA g 4) over 40,000 tokens on one rank equals the reference") {
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, {0});
  const model::Workload& workload = model::find_workload("llama3.1-8b");
  const realrun::AttentionShape shape = realrun::shape_of(workload);
  const realrun::Dtype dtype = realrun::dtype_of(workload);
  const long long tokens = 40000;
  const realrun::Inputs all = realrun::make_inputs(shape, dtype, 0, tokens, 3);
  const std::vector<double> full =
      realrun::reference_attention(shape, dtype, all.q.data(), all.k.data(), all.v.data(), tokens);
  const model::DecodePlan plan =
      model.plan(model::DecodeAlgorithm::tree, workload, tokens, realrun::plan_options(realrun::Backend::cuda));
  realrun::cuda::GpuTiming timing;
  timing.samples = 1;
  const realrun::cuda::GpuMeasurement run = realrun::cuda::measure_on_gpu(plan, 0, nullptr, 3, timing);
  CHECK(realrun::max_relative_error(run.outputs.at(0).data(), full, shape.head_dim) < 1e-4);
}
