// time_loopback_collective (cuda_decode.hpp): the loopback fabric's collectives alone, timed as the attention bench
// is (a CUDA graph of back-to-back calls, one event pair around each replay), so that the loopback cluster's fabric
// is calibrated from measurements of its own, not from the decodes it then predicts.
#include <algorithm>
#include <memory>
#include <vector>

#include "device_fabric.hpp"
#include "device_inputs.hpp"
#include "device_memory.hpp"
#include "graph_timing.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::cuda {

std::vector<double> time_loopback_collective(BenchOp op, double bytes, int ranks, int warmup, int iterations) {
  using namespace detail;
  if (ranks < 2) throw topologies::InputError("a loopback collective needs 2 or more virtual ranks");
  // The bench's sizes (bench.hpp's time_collective): all-reduce of `bytes`, all-gather of bytes / ranks from each
  // into `bytes`, send/recv of `bytes` to the next rank. Whole floats, at least one.
  const auto floats = static_cast<size_t>(std::max(1.0, bytes / 4));
  const size_t each = op == BenchOp::allgather ? std::max<size_t>(1, floats / static_cast<size_t>(ranks)) : floats;
  const auto fabric = loopback_fabric(ranks);
  fabric->reserve(floats / static_cast<size_t>(ranks) + 1);
  struct Rank {
    Stream stream;
    Event done;
    Device<float> data, all;
  };
  std::vector<std::unique_ptr<Rank>> rank;
  for (int r = 0; r < ranks; ++r) {
    rank.push_back(std::make_unique<Rank>());
    rank.back()->data = Device<float>(floats);
    rank.back()->all = Device<float>(op == BenchOp::sendrecv ? floats : each * static_cast<size_t>(ranks));
    fill_hashed(reinterpret_cast<std::uint16_t*>(rank.back()->data.data), 2 * floats,
                200 + static_cast<std::uint64_t>(r), 0, Dtype::bf16, rank.back()->stream.handle);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const Event fork;
  return graph_times(warmup, iterations, bytes, 1, [&](long long, cudaStream_t main) {
    record(fork, main);
    std::vector<RankBuffer> buffers;
    std::vector<float*> all;
    std::vector<PointOp> ops;
    for (int r = 0; r < ranks; ++r) {
      Rank& mine = *rank[static_cast<size_t>(r)];
      wait(mine.stream.handle, fork);
      buffers.push_back({r, mine.data.data, mine.stream.handle});
      all.push_back(mine.all.data);
      ops.push_back({r, true, (r + 1) % ranks, mine.data.data, floats * sizeof(float), mine.stream.handle});
      ops.push_back({r, false, (r + ranks - 1) % ranks, mine.all.data, floats * sizeof(float), mine.stream.handle});
    }
    if (op == BenchOp::allreduce)
      fabric->allreduce(buffers, floats, Reduce::sum);
    else if (op == BenchOp::allgather)
      fabric->allgather(buffers, all, each);
    else
      fabric->exchange(ops);
    for (auto& mine : rank) {
      record(mine->done, mine->stream.handle);
      wait(main, mine->done);
    }
  });
}

}  // namespace treering::realrun::cuda
