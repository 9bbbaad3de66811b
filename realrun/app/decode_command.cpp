#include "decode_command.hpp"

#include "plan_maker.hpp"
#include "provenance.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "treering/model/decode.hpp"
#include "nccl_bench.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/cuda_decode.hpp"
#include "treering/realrun/decode_run.hpp"
#include "treering/realrun/mla_run.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {
namespace {

using nlohmann::ordered_json;

// The cpu backend's tolerance: fp32 accumulation against the double-precision reference (issue 5).
constexpr double kTolerance = 1e-5;

using model::percentile;
using model::RealrunBackend;

struct Case {
  model::DecodeAlgorithm algorithm;
  long long seq_len;
};

// What one case measured: latencies, and (on rank 0) bytes and outputs of every rank.
struct Measured {
  std::vector<double> latencies;  // per repeat, the slowest rank's
  std::vector<double> bytes;      // per rank (rank 0)
  std::vector<float> outputs;     // every rank's o, rank by rank (rank 0)
  double tolerance = kTolerance;
  bool bytes_observed = true;  // false: collectives ran inside NCCL, their bytes unseen
  std::string timing_note;     // what the times are, where they are not a cluster's (loopback)
  std::string timing = "per repeat, one step from a barrier to the slowest rank's end (host clock)";
};

// A workload with multi-head latent attention runs as MLA with decode context parallelism (mla_run.hpp).
Measured measure_cpu(const DecodeOptions& options, MpiTransport& transport, const PlanMaker& plans,
                     const model::DecodePlan& plan) {
  Measured m;
  RankResult result;
  RingBuffers buffers;  // one set for every repeat, as an engine keeps them
  for (int run = 0; run < options.warmup + options.repeats; ++run) {
    result = plans.latent() ? run_mla_plan(plan, mla_shape_of(plans.workload()), dtype_of(plans.workload()), transport,
                                           options.seed)
                            : run_plan(plan, transport, options.seed, &buffers);
    const double slowest = transport.max_over_ranks(result.elapsed_s);
    if (run >= options.warmup) m.latencies.push_back(slowest);
  }
  m.bytes = transport.gather(result.bytes_sent);
  m.outputs = transport.gather(result.o);
  return m;
}

// The cuda backend's tolerance: fp32 accumulation on the device from 16-bit inputs, derived in
// realrun/tests/test_split_kv_emulation.cpp (the kernel within 1e-4 of the reference; the merges add fp32 rounding).
constexpr double kCudaTolerance = 1e-4;

cuda::GpuTiming gpu_timing(const DecodeOptions& options, const MpiTransport& transport) {
  cuda::GpuTiming timing;
  timing.warmup = options.warmup;
  timing.samples = options.repeats;
  timing.timeout_s = options.timeout_s;
  timing.on_hang = [&transport](const std::string& message) {
    close_nccl(false);  // ncclCommAbort: NCCL's kernels of this rank stop
    transport.abort_job(message);
  };
  return timing;
}

std::string graph_timing(const cuda::GpuMeasurement& g) {
  return "CUDA graph of " + std::to_string(g.steps_per_sample) + " steps per sample, one event pair around each replay";
}

// One GPU per rank: the plan on the devices, NCCL between them (cuda_decode.hpp). A step that does not finish within
// --timeout aborts the job, naming the rank and what it waited for.
Measured measure_cuda(const DecodeOptions& options, MpiTransport& transport, const model::DecodePlan& plan) {
  void* comm = transport.ranks() > 1 ? nccl_communicator() : nullptr;
  if (comm == nullptr) select_local_gpu(transport);
  const cuda::GpuMeasurement g = cuda::measure_on_gpu(
      plan, transport.rank(), comm, options.seed, gpu_timing(options, transport), [&transport] { transport.barrier(); },
      [&transport](double value) { return transport.max_over_ranks(value); });
  Measured m;
  m.latencies = transport.max_over_ranks(g.step_s);  // per sample, the slowest rank's
  m.bytes = transport.gather(g.bytes_sent.at(0));
  m.outputs = transport.gather(g.outputs.at(0));
  m.tolerance = kCudaTolerance;
  m.bytes_observed = g.collective_bytes_observed;
  m.timing = graph_timing(g);
  return m;
}

// --loopback P: the plan's P ranks on this process's GPU; every byte counted (cuda_decode.hpp's measure_loopback).
Measured measure_loopback(const DecodeOptions& options, MpiTransport& transport, const model::DecodePlan& plan) {
  select_local_gpu(transport);
  const cuda::GpuMeasurement g = cuda::measure_loopback(plan, options.seed, gpu_timing(options, transport));
  Measured m;
  m.latencies = g.step_s;
  m.bytes = g.bytes_sent;
  for (const std::vector<float>& o : g.outputs) m.outputs.insert(m.outputs.end(), o.begin(), o.end());
  m.tolerance = kCudaTolerance;
  m.timing_note = g.timing_note;
  m.timing = graph_timing(g);
  return m;
}

// The largest relative error of every rank's held output against the double-precision reference: every state
// while the context's K and V take at most kFullReferenceBytes (made on the host, as make_inputs makes them), else
// the sampled states (hashed_reference: a million tokens in seconds, nothing stored; the kernel's arithmetic is the
// same for every head, and the tests check every head at shorter lengths).
constexpr double kFullReferenceBytes = 512e6;

bool full_reference(const AttentionShape& shape, long long tokens) {  // K and V, 2 bytes a value
  return 2.0 * 2.0 * static_cast<double>(tokens) * static_cast<double>(shape.kv_values_per_token()) <=
         kFullReferenceBytes;
}

// MLA: every state of the one-rank absorbed reference (mla_reference), o_lat kv_lora_rank values a head.
double mla_reference_error(const Measured& m, const model::DecodePlan& plan, const MlaShape& shape, std::uint64_t seed,
                           long long tokens) {
  const std::vector<double> reference = mla_reference(shape, dtype_of(plan.workload), seed, tokens);
  double error = 0;
  for (size_t r = 0; r < m.bytes.size(); ++r) {
    error = std::max(error, max_relative_error(m.outputs.data() + r * reference.size(), reference, shape.kv_lora_rank,
                                               held_output(plan, static_cast<int>(r))));
  }
  return error;
}

double reference_error(const Measured& m, const model::DecodePlan& plan, std::uint64_t seed, long long tokens) {
  const AttentionShape shape = shape_of(plan.workload);
  const Dtype dtype = dtype_of(plan.workload);
  const auto values = static_cast<size_t>(shape.q_values());
  double error = 0;
  if (full_reference(shape, tokens)) {
    const Inputs all = make_inputs(shape, dtype, 0, tokens, seed);
    const std::vector<double> reference =
        reference_attention(shape, dtype, all.q.data(), all.k.data(), all.v.data(), tokens);
    for (size_t r = 0; r < m.bytes.size(); ++r) {
      error = std::max(error, max_relative_error(m.outputs.data() + r * values, reference, shape.head_dim,
                                                 held_output(plan, static_cast<int>(r))));
    }
    return error;
  }
  const std::vector<long long> states = sampled_states(shape);
  const std::vector<double> reference = hashed_reference(shape, dtype, seed, tokens, states);
  const auto d = static_cast<size_t>(shape.head_dim);
  for (size_t r = 0; r < m.bytes.size(); ++r) {
    const auto held = held_output(plan, static_cast<int>(r));
    for (size_t n = 0; n < states.size(); ++n) {
      double scale = 0;
      for (size_t i = 0; i < d; ++i) scale = std::max(scale, std::abs(reference[n * d + i]));
      for (size_t i = 0; i < d; ++i) {
        const long long at = states[n] * shape.head_dim + static_cast<long long>(i);
        const bool mine = std::any_of(held.begin(), held.end(), [at](const auto& span) {
          return at >= span.first && at < span.first + span.second;
        });
        const float value = m.outputs[r * values + static_cast<size_t>(at)];
        if (mine)
          error = std::max(error, std::isfinite(value) ? std::abs(value - reference[n * d + i]) / scale : INFINITY);
      }
    }
  }
  return error;
}

// The plan options' name: the loopback's rings are its own, NCCL's collectives NCCL's (model::realrun_plan_options).
RealrunBackend backend_of(const DecodeOptions& options) {
  return options.loopback > 0 ? RealrunBackend::cuda_loopback : options.backend;
}

// One algorithm at one length: warm-up, repeats, then the check against the reference and the model's bytes.
ordered_json run_case(const DecodeOptions& options, MpiTransport& transport, const PlanMaker& plans, const Case& c,
                      bool& ok) {
  const model::DecodePlan plan = plans.plan(c.algorithm, c.seq_len);
  const model::DecodeModel& model = plans.model();
  const model::Workload& workload = plans.workload();
  const Measured m = options.loopback > 0                      ? measure_loopback(options, transport, plan)
                     : options.backend == RealrunBackend::cuda ? measure_cuda(options, transport, plan)
                                                               : measure_cpu(options, transport, plans, plan);
  if (transport.rank() != 0) return {};
  const double error = plans.latent() ? mla_reference_error(m, plan, mla_shape_of(workload), options.seed, c.seq_len)
                                      : reference_error(m, plan, options.seed, c.seq_len);
  const long long non_finite = count_non_finite(m.outputs.data(), m.outputs.size());
  if (non_finite > 0) {
    std::fprintf(stderr, "error: %s at %lld tokens: %lld output values are NaN or infinite\n",
                 model::to_string(c.algorithm), c.seq_len, non_finite);
  }
  // MLA: the model's bytes are the combine's; the query all-gather before the attention adds its own.
  const double gather = plans.latent() ? mla_query_gather_bytes(mla_shape_of(workload), transport.ranks()) : 0.0;
  std::vector<double> model_per_rank = model::bytes_sent_per_rank(plan);
  for (double& bytes : model_per_rank) bytes += gather;
  const double model_total = model.evaluate(plan).volume.total + gather * static_cast<double>(model_per_rank.size());
  const double total = std::accumulate(m.bytes.begin(), m.bytes.end(), 0.0);
  ok = ok && error <= m.tolerance && (!m.bytes_observed || (total == model_total && m.bytes == model_per_rank));
  ordered_json row{{"algo", model::to_string(c.algorithm)},
                   {"seq_len", c.seq_len},
                   {"ranks", static_cast<int>(plan.gpus.size())},
                   {"backend", to_string(backend_of(options))},
                   {"workload", workload.name},
                   {"batch", workload.batch},
                   {"latency_s",
                    {{"median", percentile(m.latencies, 0.5)},
                     {"p10", percentile(m.latencies, 0.1)},
                     {"p90", percentile(m.latencies, 0.9)},
                     {"samples", m.latencies}}},
                   {"max_rel_error", error},
                   {"non_finite_outputs", non_finite},
                   {"tolerance", m.tolerance},
                   {"bytes_sent_per_rank", m.bytes},
                   {"model_bytes_per_rank", model_per_rank},
                   {"bytes_sent_total", total},
                   {"model_bytes_total", model_total},
                   {"collective_bytes_observed", m.bytes_observed}};
  row["timing"] = m.timing;
  ordered_json phases = ordered_json::array();  // what the model says runs: NCCL's pick of algorithm and protocol
  for (const model::PhaseTime& phase : model.evaluate(plan).phases)
    phases.push_back({{"phase", phase.label}, {"how", phase.how}});
  row["predicted_phases"] = phases;
  if (backend_of(options) == RealrunBackend::cuda) {
    const char* algo = std::getenv("NCCL_ALGO");
    const char* proto = std::getenv("NCCL_PROTO");
    row["nccl_env"] = {{"NCCL_ALGO", algo ? ordered_json(algo) : ordered_json()},
                       {"NCCL_PROTO", proto ? ordered_json(proto) : ordered_json()}};
  }
  row["attention"] = plans.latent() ? "mla-absorbed, decode context parallel" : "gqa";
  row["reference"] = plans.latent() || full_reference(shape_of(workload), c.seq_len)
                         ? "every state, double precision"
                         : "sampled states (first and last, half a group away), double precision";
  if (options.loopback > 0) {
    row["loopback_virtual_ranks"] = options.loopback;
    row["timing_note"] = m.timing_note;
  }
  return row;
}

void print_row(const ordered_json& row) {
  std::printf("%-16s %9lld %6d %12.3f ms %12.3f ms %10.2e %14.0f %14.0f\n", row["algo"].get<std::string>().c_str(),
              row["seq_len"].get<long long>(), row["ranks"].get<int>(), 1e3 * row["latency_s"]["median"].get<double>(),
              1e3 * row["latency_s"]["p90"].get<double>(), row["max_rel_error"].get<double>(),
              row["bytes_sent_total"].get<double>(), row["model_bytes_total"].get<double>());
}

// What the MLA run takes: the cpu backend, a combine (not ring or pass-q), a context whose latents the one-rank
// reference can hold.
void check_mla(const DecodeOptions& options, const model::Workload& workload,
               const std::vector<model::DecodeAlgorithm>& algorithms, const std::vector<long long>& lengths) {
  const std::string what = workload.name + " (multi-head latent attention)";
  if (options.backend != RealrunBackend::cpu || options.loopback > 0)
    throw topologies::InputError(what + " runs on --backend cpu only");
  for (model::DecodeAlgorithm algorithm : algorithms) {
    if (algorithm == model::DecodeAlgorithm::ring || algorithm == model::DecodeAlgorithm::pass_q) {
      throw topologies::InputError(what + ": --algo " + model::to_string(algorithm) +
                                   " is not run for MLA; a2a, ag-rs, tree, tree-fused, tree-lse or allgather-merge");
    }
  }
  const MlaShape shape = mla_shape_of(workload);
  for (long long tokens : lengths) {
    if (2.0 * static_cast<double>(tokens) * shape.batch * shape.latent() > kFullReferenceBytes) {
      throw topologies::InputError(what + ": " + std::to_string(tokens) +
                                   " tokens: the reference holds every latent, " + "at most " +
                                   std::to_string(static_cast<long long>(kFullReferenceBytes)) + " bytes");
    }
  }
}

}  // namespace

int run_decode(const DecodeOptions& options, MpiTransport& transport) {
  if (options.backend != RealrunBackend::cpu && options.backend != RealrunBackend::cuda)
    throw std::logic_error("decode: the backend is cpu or cuda (--loopback makes the loopback)");
  if (options.repeats < 1 || options.warmup < 0)
    throw topologies::InputError("--repeats must be at least 1, --warmup at least 0");
  if (options.backend == RealrunBackend::cuda && options.warmup < 1) {
    throw topologies::InputError(
        "--backend cuda needs --warmup 1 or more (the first run loads the kernels and sets up NCCL's connections)");
  }
  if (options.loopback != 0) {
    if (options.backend != RealrunBackend::cuda)
      throw topologies::InputError("--loopback runs the cuda backend (--backend cuda)");
    if (options.loopback < 1 || options.loopback > 64)
      throw topologies::InputError("--loopback takes 1 to 64 virtual ranks");
    if (transport.ranks() > 1)
      throw topologies::InputError("--loopback runs in one MPI rank (its virtual ranks are streams on one GPU)");
  }
  // The flags first, the device after: a bad flag (or NCCL_ALGO) is named on any machine, with or without a GPU.
  const int ranks = options.loopback > 0 ? options.loopback : transport.ranks();
  const PlanMaker plans(options.cluster, options.workload, options.batch, ranks, backend_of(options));
  std::vector<model::DecodeAlgorithm> algorithms;  // checked before anything runs
  for (const std::string& name : options.algorithms) algorithms.push_back(model::parse_decode_algorithm(name));
  const std::vector<long long> lengths = topologies::parse_token_counts(options.seq_len);
  if (plans.latent()) check_mla(options, plans.workload(), algorithms, lengths);
  if (options.backend == RealrunBackend::cuda) {
    std::string why;
    if (!cuda::decode_available(why)) throw topologies::InputError("--backend cuda: " + why);
    if (transport.ranks() > 1 && options.loopback == 0 && !nccl_available(why))
      throw topologies::InputError("--backend cuda: " + why);
  }
  ordered_json results = ordered_json::array();
  bool ok = true;
  if (transport.rank() == 0) {
    std::printf("%-16s %9s %6s %15s %15s %10s %14s %14s\n", "algorithm", "tokens", "ranks", "median", "p90",
                "max error", "bytes sent", "model bytes");
  }
  std::optional<topologies::OutputFile> out;  // opened before the runs: a bad path fails at once
  if (transport.rank() == 0 && !options.output.empty()) out.emplace(options.output);
  for (long long seq_len : lengths) {
    for (model::DecodeAlgorithm algorithm : algorithms) {
      ordered_json row = run_case(options, transport, plans, {algorithm, seq_len}, ok);
      if (transport.rank() != 0) continue;
      print_row(row);
      results.push_back(std::move(row));
    }
  }
  if (out) {
    out->stream() << ordered_json{{"provenance", provenance(options.argv, options.backend, transport)},
                                  {"results", results}}
                         .dump(2)
                  << '\n';
    out->commit();
  }
  const double failed = transport.max_over_ranks(ok ? 0.0 : 1.0);
  if (failed > 0 && transport.rank() == 0)
    std::fprintf(stderr, "error: an output was off the reference or the bytes differ from the model's\n");
  return failed > 0 ? 1 : 0;
}

}  // namespace treering::realrun::app
