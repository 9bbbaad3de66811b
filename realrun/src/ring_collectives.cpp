#include "ring_collectives.hpp"

#include <algorithm>
#include <cstring>

namespace treering::realrun::detail {

void ring_allreduce(CountingLink& link, float* data, std::size_t count, ReduceOp op, int tag) {
  const int n = link.ranks();
  const int r = link.rank();
  if (n < 2) return;
  const int next = (r + 1) % n, previous = (r + n - 1) % n;
  std::vector<float> incoming(count / static_cast<std::size_t>(n) + 1);
  for (int step = 0; step < n - 1; ++step) {  // reduce-scatter: rank r ends up owning chunk r + 1
    const RingChunk out = ring_chunk(count, n, ring_wrap(r - step, n));
    const RingChunk in = ring_chunk(count, n, ring_wrap(r - step - 1, n));
    const auto sent = link.isend(data + out.first, out.count * sizeof(float), next, tag);
    link.wait(link.irecv(incoming.data(), in.count * sizeof(float), previous, tag));
    for (std::size_t i = 0; i < in.count; ++i) {
      float& value = data[in.first + i];
      value = op == ReduceOp::sum ? value + incoming[i] : std::max(value, incoming[i]);
    }
    link.wait(sent);
  }
  for (int step = 0; step < n - 1; ++step) {  // all-gather of the owned chunks
    const RingChunk out = ring_chunk(count, n, ring_wrap(r + 1 - step, n));
    const RingChunk in = ring_chunk(count, n, ring_wrap(r - step, n));
    const auto sent = link.isend(data + out.first, out.count * sizeof(float), next, tag);
    link.wait(link.irecv(data + in.first, in.count * sizeof(float), previous, tag));
    link.wait(sent);
  }
}

void ring_reduce_scatter(CountingLink& link, float* data, std::size_t count, int tag) {
  const int n = link.ranks();
  const int r = link.rank();
  if (n < 2) return;
  const int next = (r + 1) % n, previous = (r + n - 1) % n;
  std::vector<float> incoming(count / static_cast<std::size_t>(n) + 1);
  for (int step = 0; step < n - 1; ++step) {
    const RingChunk out = ring_chunk(count, n, ring_wrap(r - 1 - step, n));
    const RingChunk in = ring_chunk(count, n, ring_wrap(r - 2 - step, n));
    const auto sent = link.isend(data + out.first, out.count * sizeof(float), next, tag);
    link.wait(link.irecv(incoming.data(), in.count * sizeof(float), previous, tag));
    for (std::size_t i = 0; i < in.count; ++i) data[in.first + i] += incoming[i];
    link.wait(sent);
  }
}

std::vector<float> ring_allgather(CountingLink& link, const float* mine, std::size_t count, int tag) {
  const int n = link.ranks();
  const int r = link.rank();
  std::vector<float> all(count * static_cast<std::size_t>(n));
  std::memcpy(all.data() + count * static_cast<std::size_t>(r), mine, count * sizeof(float));
  const int next = (r + 1) % n, previous = (r + n - 1) % n;
  for (int step = 0; step < n - 1; ++step) {  // forward the block received last step
    const auto out = static_cast<std::size_t>(ring_wrap(r - step, n));
    const auto in = static_cast<std::size_t>(ring_wrap(r - step - 1, n));
    const auto sent = link.isend(all.data() + out * count, count * sizeof(float), next, tag);
    link.wait(link.irecv(all.data() + in * count, count * sizeof(float), previous, tag));
    link.wait(sent);
  }
  return all;
}

}  // namespace treering::realrun::detail
