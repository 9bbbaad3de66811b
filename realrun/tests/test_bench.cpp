// The microbenchmarks' definitions: nccl-tests' bus factors, and timings that are timings.
#include <doctest/doctest.h>

#include "treering/realrun/bench.hpp"

using namespace treering::realrun;

TEST_CASE("bus factors as nccl-tests defines them") {
  // all-reduce on 8 ranks: 2 x 7/8 = 1.75; all-gather 7/8; send/recv 1.
  CHECK(bus_factor(BenchOp::allreduce, 8) == doctest::Approx(1.75).scale(1e-12));
  CHECK(bus_factor(BenchOp::allgather, 8) == doctest::Approx(0.875).scale(1e-12));
  CHECK(bus_factor(BenchOp::sendrecv, 8) == 1.0);
  CHECK(parse_bench_op("allgather") == BenchOp::allgather);
  CHECK_THROWS_AS(parse_bench_op("alltoall"), std::invalid_argument);
  // K and V of 1,000 tokens of paper-mha16 (16 x 128 values each, 2 B) and q: 2 x 1000 x 2048 x 2 + 2048 x 2.
  CHECK(attention_bytes({1, 16, 16, 128}, 1000) == 2.0 * 1000 * 2048 * 2 + 2048 * 2);
}

TEST_CASE("collectives over threads: one timing per iteration, all positive") {
  for (BenchOp op : {BenchOp::allreduce, BenchOp::allgather, BenchOp::sendrecv}) {
    run_local_ranks(3, [&](Transport& transport) {
      const std::vector<double> seconds = time_collective(transport, op, 4096, 1, 4);
      CHECK(seconds.size() == 4);
      for (double s : seconds) CHECK(s > 0);  // a clock that did not move would mean nothing was timed
    });
  }
  const std::vector<double> copies = time_copy(1 << 20, 1, 3);
  CHECK(copies.size() == 3);
  for (double s : copies) CHECK(s > 0);
  const std::vector<double> calls = time_attention({1, 2, 1, 64}, Dtype::bf16, 100, 0, 2);
  CHECK(calls.size() == 2);
  for (double s : calls) CHECK(s > 0);
}
