#include "bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "bench_sizes.hpp"
#include "nccl_bench.hpp"
#include "provenance.hpp"
#include "treering/model/workload.hpp"
#include "treering/realrun/bench.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {
namespace {

using nlohmann::ordered_json;

using model::percentile;
using model::RealrunBackend;

constexpr std::pair<BenchKind, const char*> kBenchKinds[] = {{BenchKind::allreduce, "allreduce"},
                                                             {BenchKind::allgather, "allgather"},
                                                             {BenchKind::sendrecv, "sendrecv"},
                                                             {BenchKind::hbm, "hbm"},
                                                             {BenchKind::attention, "attention"}};

ordered_json timing(const std::vector<double>& seconds) {
  return {{"median", percentile(seconds, 0.5)}, {"p10", percentile(seconds, 0.1)}, {"p90", percentile(seconds, 0.9)}};
}

// The ranks a collective bench measures: the MPI job's, or --loopback's virtual ranks on one GPU.
int bench_ranks(const BenchOptions& options, const MpiTransport& transport) {
  return options.loopback > 0 ? options.loopback : transport.ranks();
}

std::vector<double> time_one(const BenchOptions& options, MpiTransport& transport, BenchOp op, double bytes) {
  if (options.loopback > 0)
    return cuda::time_loopback_collective(op, bytes, options.loopback, options.warmup, options.iterations);
  if (options.backend == RealrunBackend::cuda) return time_nccl(op, bytes, options.warmup, options.iterations);
  return time_collective(transport, op, bytes, options.warmup, options.iterations);
}

ordered_json collectives(const BenchOptions& options, const std::vector<double>& sizes, MpiTransport& transport,
                         BenchOp op) {
  ordered_json rows = ordered_json::array();
  const bool nccl = options.backend == RealrunBackend::cuda;
  std::string why;
  if (nccl && options.loopback == 0 && !nccl_available(why)) throw topologies::InputError("--backend cuda: " + why);
  if (options.loopback != 0) {
    if (!nccl) throw topologies::InputError("--loopback runs the cuda backend (--backend cuda)");
    if (options.loopback < 2 || options.loopback > 64)
      throw topologies::InputError("--loopback takes 2 to 64 virtual ranks for a collective");
    if (transport.ranks() > 1)
      throw topologies::InputError("--loopback runs in one MPI rank (its virtual ranks are streams on one GPU)");
    if (!cuda::decode_available(why)) throw topologies::InputError("--loopback: " + why);
    select_local_gpu(transport);
  }
  const int ranks = bench_ranks(options, transport);
  if (transport.rank() == 0) {
    std::printf("%12s %12s %12s %12s %12s   (%s, %d ranks, %s%s)\n", "size (B)", "time (us)", "p90 (us)",
                "algbw (GB/s)", "busbw (GB/s)", to_string(op), ranks,
                options.loopback > 0 ? "loopback rings of device copies"
                : nccl               ? "NCCL"
                                     : "MPI rings",
                op == BenchOp::allreduce ? ", fp32 sum" : "");
  }
  for (double bytes : sizes) {
    const std::vector<double> mine = time_one(options, transport, op, bytes);
    const std::vector<double> slowest = transport.max_over_ranks(mine);
    const double median = percentile(slowest, 0.5);
    const double algbw = bytes / median;
    const double busbw = algbw * bus_factor(op, ranks);
    if (transport.rank() == 0) {
      std::printf("%12.0f %12.2f %12.2f %12.3f %12.3f\n", bytes, 1e6 * median, 1e6 * percentile(slowest, 0.9),
                  algbw / 1e9, busbw / 1e9);
    }
    rows.push_back({{"size_bytes", bytes}, {"time_s", timing(slowest)}, {"algbw_Bps", algbw}, {"busbw_Bps", busbw}});
  }
  return rows;
}

bool on_gpu(const BenchOptions& options) {
  if (options.backend == RealrunBackend::cpu) return false;
  std::string why;
  if (!cuda::available(why)) throw topologies::InputError("--backend cuda: " + why);
  return true;
}

// The copy bandwidth (bytes copied per second; the memory moves twice as much: read and write).
double copy_Bps(const BenchOptions& options, MpiTransport& transport, ordered_json& rows) {
  const double bytes = topologies::parse_message_size_bytes(options.copy_bytes);
  const bool gpu = on_gpu(options);
  if (gpu) select_local_gpu(transport);
  transport.barrier();  // every rank copies at once: on the host they share the memory
  const std::vector<double> mine = gpu ? cuda::time_copy(bytes, options.warmup, options.iterations)
                                       : time_copy(bytes, options.warmup, options.iterations);
  const std::vector<double> slowest = transport.max_over_ranks(mine);
  const double bandwidth = bytes / percentile(slowest, 0.5);
  rows.push_back({{"size_bytes", bytes},
                  {"backend", to_string(options.backend)},
                  {"device", gpu ? cuda::device_name() : "host"},
                  {"time_s", timing(slowest)},
                  {"copy_Bps", bandwidth},
                  {"memory_traffic_Bps", 2 * bandwidth}});
  if (transport.rank() == 0) {
    std::printf("%s copy: %.0f B in %.3f ms: %.2f GB/s copied per rank (%.2f GB/s of memory traffic)\n",
                gpu ? "device" : "host", bytes, 1e3 * percentile(slowest, 0.5), bandwidth / 1e9, 2 * bandwidth / 1e9);
  }
  return bandwidth;
}

ordered_json attention(const BenchOptions& options, const std::vector<long long>& token_counts,
                       MpiTransport& transport) {
  ordered_json rows = ordered_json::array();
  ordered_json copy = ordered_json::array();
  const double copy_bandwidth = copy_Bps(options, transport, copy);
  const model::Workload workload = model::find_workload(options.workload);
  const AttentionShape shape = shape_of(workload);
  for (long long tokens : token_counts) {
    transport.barrier();
    const std::vector<double> mine =
        on_gpu(options) ? cuda::time_attention(shape, dtype_of(workload), tokens, options.warmup, options.iterations)
                        : time_attention(shape, dtype_of(workload), tokens, options.warmup, options.iterations);
    const std::vector<double> slowest = transport.max_over_ranks(mine);
    const double achieved = attention_bytes(shape, tokens) / percentile(slowest, 0.5);
    // The kernel reads; a copy reads and writes: its memory traffic (2x the bytes copied) is the yardstick.
    const double fraction = achieved / (2 * copy_bandwidth);
    if (transport.rank() == 0) {
      std::printf("attention %9lld tokens: %10.3f ms, %8.2f GB/s read, %5.1f %% of the copy's memory traffic\n", tokens,
                  1e3 * percentile(slowest, 0.5), achieved / 1e9, 100 * fraction);
    }
    rows.push_back(
        {{"tokens", tokens},
         {"workload", workload.name},
         {"batch", shape.batch},
         {"query_heads", shape.query_heads},
         {"kv_heads", shape.kv_heads},
         {"head_dim", shape.head_dim},
         {"dtype", workload.dtype},
         {"implementation", on_gpu(options) ? "treering split-KV, tensor cores (mma.sync), one launch, CUDA graph"
                                            : "treering split-KV, CPU, scalar fp32"},
         {"time_s", timing(slowest)},
         {"bytes_read", attention_bytes(shape, tokens)},
         {"achieved_Bps", achieved},
         {"fraction_of_copy_traffic", fraction}});
  }
  return {{"copy", copy}, {"attention", rows}};
}

}  // namespace

std::optional<BenchKind> find_bench_kind(const std::string& name) {
  for (const auto& [kind, known] : kBenchKinds) {
    if (name == known) return kind;
  }
  return std::nullopt;
}

const char* to_string(BenchKind kind) {
  for (const auto& [known, name] : kBenchKinds) {
    if (kind == known) return name;
  }
  throw std::logic_error("to_string: not a BenchKind");
}

std::optional<BenchOp> collective_of(BenchKind kind) {
  switch (kind) {
    case BenchKind::allreduce: return BenchOp::allreduce;
    case BenchKind::allgather: return BenchOp::allgather;
    case BenchKind::sendrecv: return BenchOp::sendrecv;
    case BenchKind::hbm:
    case BenchKind::attention: return std::nullopt;
  }
  throw std::logic_error("collective_of: not a BenchKind");
}

int run_bench(const BenchOptions& options, MpiTransport& transport) {
  if (options.iterations < 1 || options.warmup < 0)
    throw topologies::InputError("--iters must be at least 1, --warmup at least 0");
  if (options.backend != RealrunBackend::cpu && options.backend != RealrunBackend::cuda)
    throw std::logic_error("bench: the backend is cpu or cuda (--loopback makes the loopback)");
  if (options.backend == RealrunBackend::cuda && options.warmup < 1)
    throw topologies::InputError("--backend cuda needs --warmup 1 or more");
  BenchSizes sizes;
  if (options.for_plan) {
    sizes = sizes_for_plans(options, transport.ranks());
  } else if (options.kind == BenchKind::attention) {
    sizes.tokens = topologies::parse_token_counts(options.tokens);
  } else if (options.kind != BenchKind::hbm) {
    sizes.bytes = topologies::parse_message_sizes(options.sizes);
  }
  std::optional<topologies::OutputFile> out;  // opened before the runs: a bad path fails at once
  if (transport.rank() == 0 && !options.output.empty()) out.emplace(options.output);
  ordered_json results;
  if (options.kind == BenchKind::hbm) {
    results = ordered_json::array();
    copy_Bps(options, transport, results);
  } else if (options.kind == BenchKind::attention) {
    results = attention(options, sizes.tokens, transport);
  } else {
    results = collectives(options, sizes.bytes, transport, collective_of(options.kind).value());
  }
  if (out) {
    ordered_json file{{"provenance", provenance(options.argv, options.backend, transport)},
                      {"bench", to_string(options.kind)}};
    if (options.loopback > 0) {  // the virtual ranks are the collective's ranks
      file["provenance"]["backend"] = to_string(RealrunBackend::cuda_loopback);
      file["provenance"]["ranks"] = options.loopback;
    }
    // What ran: the cpu backend's and the loopback's rings (send/recv: point to point); on cuda, NCCL's own pick.
    if ((options.backend == RealrunBackend::cpu || options.loopback > 0) && collective_of(options.kind)) {
      file["algorithm"] = options.kind == BenchKind::sendrecv ? "p2p" : "ring";
    }
    file["results"] = results;
    out->stream() << file.dump(2) << '\n';
    out->commit();
  }
  return 0;
}

}  // namespace treering::realrun::app
