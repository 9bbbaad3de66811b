// Ring all-reduce and all-gather of floats over a transport, step by step as NCCL's rings move them, counting
// the bytes sent. Private to realrun.
#pragma once

#include <cstddef>
#include <vector>

#include "treering/model/ring_chunks.hpp"
#include "treering/realrun/transport.hpp"

namespace treering::realrun::detail {

// A transport that counts what is sent through it.
struct CountingLink {
  Transport& transport;
  double bytes_sent = 0;
  Transport::Request isend(const void* data, std::size_t bytes, int to, int tag) {
    bytes_sent += static_cast<double>(bytes);
    return transport.isend(data, bytes, to, tag);
  }
  Transport::Request irecv(void* data, std::size_t bytes, int from, int tag) {
    return transport.irecv(data, bytes, from, tag);
  }
  void wait(Transport::Request request) { transport.wait(request); }
  int rank() const { return transport.rank(); }
  int ranks() const { return transport.ranks(); }
};

enum class ReduceOp { max, sum };

// The rings cut their buffers as the model counts them (model/ring_chunks.hpp); the cuda backend's loopback rings
// cut the same.
using model::ring_chunk;
using model::ring_wrap;
using model::RingChunk;

// Reduce-scatter then all-gather in n - 1 steps each, the buffer cut into n chunks (the first count mod n one
// element longer): every rank sends 2 (n-1) chunks, 2 (n-1) x count x 4 bytes over all ranks.
// Example: 3 ranks, 16 floats: chunks of 6, 5, 5; rank 0 sends chunks 0, 2 then 1, 0: 6+5+5+6 = 22 floats.
void ring_allreduce(CountingLink& link, float* data, std::size_t count, ReduceOp op, int tag);

// Sums every rank's `count` floats and leaves chunk r (cut as above) on rank r, in n - 1 steps: step k sends
// chunk (r - 1 - k) mod n, so rank r sends every chunk but its own. Example: 3 ranks, 16 floats: rank 0 sends
// chunks 2 and 1 = 10 floats and ends with chunk 0 (6 values) summed. The rest of `data` is left partial.
void ring_reduce_scatter(CountingLink& link, float* data, std::size_t count, int tag);

// Every rank's `count` floats to every rank, in rank order, in n - 1 steps: each sends (n - 1) x count floats.
std::vector<float> ring_allgather(CountingLink& link, const float* mine, std::size_t count, int tag);

}  // namespace treering::realrun::detail
