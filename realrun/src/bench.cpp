#include "treering/realrun/bench.hpp"
#include "treering/realrun/decode_run.hpp"

#include <algorithm>
#include <cmath>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "ring_collectives.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun {

BenchOp parse_bench_op(const std::string& name) {
  if (name == "allreduce") return BenchOp::allreduce;
  if (name == "allgather") return BenchOp::allgather;
  if (name == "sendrecv") return BenchOp::sendrecv;
  throw topologies::InputError("unknown benchmark '" + name + "' (allreduce, allgather, sendrecv, hbm, attention)");
}

const char* to_string(BenchOp op) {
  switch (op) {
    case BenchOp::allreduce: return "allreduce";
    case BenchOp::allgather: return "allgather";
    case BenchOp::sendrecv: return "sendrecv";
  }
  return "?";
}

double bus_factor(BenchOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case BenchOp::allreduce: return 2 * (n - 1) / n;
    case BenchOp::allgather: return (n - 1) / n;
    case BenchOp::sendrecv: return 1;
  }
  return 1;
}

namespace {

template <typename Body>
std::vector<double> timed(const std::function<double()>& now, int warmup, int iterations, Body body) {
  std::vector<double> seconds;
  for (int i = 0; i < warmup + iterations; ++i) {
    const double start = now();
    body();
    if (i >= warmup) seconds.push_back(now() - start);
  }
  return seconds;
}

// Larger than the last-level caches of the hosts this runs on (a 2-core VM's share of an EPYC's 32 MiB L3).
constexpr double kColdBytes = 128.0 * 1024 * 1024;

}  // namespace

std::vector<double> time_collective(Transport& transport, BenchOp op, double bytes, int warmup, int iterations) {
  const int n = transport.ranks();
  const auto floats = static_cast<size_t>(std::max(1.0, bytes / 4));
  const size_t per_rank = std::max<size_t>(1, floats / static_cast<size_t>(n));
  // Buffers in rotation, together at least kColdBytes (or one set per iteration): each iteration moves data that
  // is not in the caches, as a decode's transfers do (its attention has just streamed the K/V through them);
  // the pages themselves are touched here, before the clock, as an engine's buffers are.
  const size_t length = op == BenchOp::allgather ? per_rank : floats;
  const double set_bytes = 2.0 * static_cast<double>(length) * 4;
  const auto sets =
      static_cast<size_t>(std::clamp(std::ceil(kColdBytes / set_bytes), 1.0, static_cast<double>(iterations)));
  std::vector<std::vector<float>> buffers(sets, std::vector<float>(length, 1.0f)),
      incomings(sets, std::vector<float>(length, 0.0f));
  size_t turn = 0;
  detail::CountingLink link{transport, 0.0};
  const int next = (transport.rank() + 1) % n, previous = (transport.rank() + n - 1) % n;
  auto clock = [&] { return transport.now_s(); };
  // Every set goes through the transport once before the warm-up: the first transfer into (or out of) pages
  // is slower (Open MPI's single-copy path maps them), and an engine's buffers are past their first use.
  return timed(clock, static_cast<int>(sets) + warmup, iterations, [&] {
    std::vector<float>& buffer = buffers[turn % sets];
    std::vector<float>& incoming = incomings[turn++ % sets];
    transport.barrier();
    switch (op) {
      case BenchOp::allreduce:
        detail::ring_allreduce(link, buffer.data(), buffer.size(), detail::ReduceOp::sum, 1);
        break;
      case BenchOp::allgather: detail::ring_allgather(link, buffer.data(), buffer.size(), 2); break;
      case BenchOp::sendrecv: {
        if (n < 2) break;
        const auto sent = link.isend(buffer.data(), buffer.size() * 4, next, 3);
        link.wait(link.irecv(incoming.data(), incoming.size() * 4, previous, 3));
        link.wait(sent);
        break;
      }
    }
  });
}

std::vector<double> time_copy(double bytes, int warmup, int iterations) {
  const auto size = static_cast<size_t>(std::max(1.0, bytes));
  std::vector<char> from(size, 1), to(size, 0);
  auto clock = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  return timed(clock, warmup, iterations, [&] {
    std::memcpy(to.data(), from.data(), size);
    from[0] = static_cast<char>(to[size - 1] + 1);  // keeps the copies from being optimised away
  });
}

double attention_bytes(const AttentionShape& shape, long long tokens) {
  return 2.0 * static_cast<double>(tokens) * static_cast<double>(shape.kv_values_per_token()) * 2 +
         static_cast<double>(shape.q_values()) * 2;
}

std::vector<double> time_attention(const AttentionShape& shape, Dtype dtype, long long tokens, int warmup,
                                   int iterations) {
  check_shape(shape);
  // The decode's inputs (make_inputs: the same made-up values, not constants), in sets that rotate through more
  // than kColdBytes, each used once before the clock: every call reads K/V that are not in the caches, as a
  // decode's attention does (one pass over its shard per token), where one set would be timed from the caches.
  const double set_bytes = 2.0 * static_cast<double>(tokens) * static_cast<double>(shape.kv_values_per_token()) * 2;
  const auto sets =
      static_cast<size_t>(std::clamp(std::ceil(kColdBytes / set_bytes), 1.0, static_cast<double>(iterations)));
  std::vector<Inputs> inputs;
  for (size_t i = 0; i < sets; ++i)
    inputs.push_back(make_inputs(shape, dtype, static_cast<long long>(i) * tokens, tokens, 7));
  std::vector<float> o(static_cast<size_t>(shape.q_values())), lse(static_cast<size_t>(shape.states()));
  size_t turn = 0;
  auto clock = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  return timed(clock, static_cast<int>(sets) + warmup, iterations, [&] {
    const Inputs& in = inputs[turn++ % sets];
    partial_attention(shape, dtype, in.q.data(), in.k.data(), in.v.data(), tokens, o.data(), lse.data());
  });
}

GpuTimingPlan plan_gpu_timing(double bytes_per_call, double l2_bytes, double memory_budget_bytes,
                              double estimated_call_s, double min_sample_s) {
  if (!(bytes_per_call > 0) || !(l2_bytes >= 0) || !(estimated_call_s >= 0)) {
    throw topologies::InputError("plan_gpu_timing: a call's bytes must be positive, the L2 size and time not negative");
  }
  const double wanted = std::ceil(2 * l2_bytes / bytes_per_call);
  const double fits = std::floor(memory_budget_bytes / bytes_per_call);
  GpuTimingPlan plan;
  plan.copies = static_cast<int>(std::max(1.0, std::min({wanted, fits, 1e4})));
  const double for_duration = estimated_call_s > 0 ? std::ceil(min_sample_s / estimated_call_s) : 1e4;
  plan.calls_per_sample =
      static_cast<int>(std::min(1e4, std::max({1.0, for_duration, static_cast<double>(plan.copies)})));
  return plan;
}

}  // namespace treering::realrun
