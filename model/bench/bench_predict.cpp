// How fast the analytical model evaluates decode configurations (`make bench`). Prints figures; asserts
// nothing (speed is checked by reading these, not by timed tests).
#include <chrono>
#include <cstdio>

#include "treering/model/decode.hpp"
#include "treering/topologies/load.hpp"

using namespace treering;

namespace {

// 5 algorithms x `lengths` context lengths from 80k up, on `nodes` DGX H100 nodes.
void bench(int nodes, int lengths) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {nodes, std::nullopt});
  const topologies::Topology topology(spec);
  const model::DecodeModel model(topology);
  const auto built = clock::now();
  double checksum = 0;
  int configurations = 0;
  for (int i = 0; i < lengths; ++i) {
    const long long seq_len = 80000 + 2557LL * i;  // uneven lengths: shards differ by a token
    for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
      checksum += model.predict(algorithm, model::find_workload("paper-mha16"), seq_len).latency_s;
      ++configurations;
    }
  }
  const auto done = clock::now();
  const double setup_s = std::chrono::duration<double>(built - start).count();
  const double predict_s = std::chrono::duration<double>(done - built).count();
  std::printf(
      "dgx-h100 x %d nodes (%d GPUs): setup %.3f s; %d configurations in %.3f s = %.1f us each "
      "(checksum %.6g)\n",
      nodes, topology.gpu_count(), setup_s, configurations, predict_s, 1e6 * predict_s / configurations, checksum);
}

// Each algorithm on its own, `lengths` uneven context lengths, on `nodes` DGX H100 nodes: ms per case.
void bench_each(int nodes, int lengths) {
  using clock = std::chrono::steady_clock;
  topologies::ClusterSpec spec = topologies::load_cluster("dgx-h100");
  topologies::apply_overrides(spec, {nodes, std::nullopt});
  const topologies::Topology topology(spec);
  const auto start = clock::now();
  const model::DecodeModel model(topology);
  std::printf("dgx-h100 x %d nodes (%d GPUs): model set up in %.3f s; per case (plan and evaluate):", nodes,
              topology.gpu_count(), std::chrono::duration<double>(clock::now() - start).count());
  for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) {
    const auto begin = clock::now();
    double checksum = 0;
    for (int i = 0; i < lengths; ++i) {
      checksum += model.predict(algorithm, model::find_workload("paper-mha16"), 1000001 + 2557LL * i).latency_s;
    }
    std::printf(" %s %.2f ms%s", model::to_string(algorithm),
                1e3 * std::chrono::duration<double>(clock::now() - begin).count() / lengths,
                checksum > 0 ? "" : " (?)");
  }
  std::printf("\n");
}

}  // namespace

int main() {
  bench(16, 2000);      // 10,000 configurations at the paper's largest scale (128 GPUs)
  bench(128, 200);      // 1,000 configurations on 1024 GPUs
  bench_each(2048, 5);  // every algorithm on 16,384 GPUs
  return 0;
}
