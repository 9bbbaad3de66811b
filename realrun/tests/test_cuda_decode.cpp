// The cuda backend's decode on one GPU (the device pool lends single GPUs: NCCL across GPUs cannot run there):
// every algorithm's output within 2e-3 of the reference. Without a usable device every case says why and passes.
#include <doctest/doctest.h>

#include <numeric>

#include "treering/model/decode.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

TEST_CASE("cuda decode on one GPU: every algorithm equals the reference") {
  std::string why;
  if (!realrun::cuda::decode_available(why)) {
    MESSAGE("skipped, no GPU: " << why);
    return;
  }
  const topologies::Topology topology = topologies::build_topology("dgx-h100", {1, {}});
  const model::DecodeModel model(topology, {0});
  const model::Workload& workload = model::find_workload("paper-mha16");
  const realrun::AttentionShape shape = realrun::shape_of(workload);
  for (long long seq_len : {1LL, 3000LL}) {
    const realrun::Inputs all = realrun::make_inputs(shape, realrun::dtype_of(workload), 0, seq_len, 7);
    const std::vector<double> reference =
        realrun::reference_attention(shape, realrun::dtype_of(workload), all.q.data(), all.k.data(), all.v.data(), seq_len);
    for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
      const model::DecodePlan plan = model.plan(algorithm, workload, seq_len, realrun::plan_options(realrun::Backend::cuda));
      const realrun::cuda::GpuRankResult result = realrun::cuda::run_plan_on_gpu(plan, 0, nullptr, 7);
      CAPTURE(seq_len);
      CAPTURE(std::string(model::to_string(algorithm)));
      CHECK(realrun::max_relative_error(result.o.data(), reference, shape.head_dim) < 2e-3);
      CHECK(result.bytes_sent == 0);  // one GPU sends nothing
    }
  }
}
