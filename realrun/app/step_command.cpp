#include "step_command.hpp"

#include "cli_choices.hpp"

#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "provenance.hpp"
#include "treering/model/statistics.hpp"
#include "treering/model/weights.hpp"
#include "treering/realrun/cuda_attention.hpp"
#include "treering/realrun/step_run.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::realrun::app {
namespace {

using nlohmann::ordered_json;

ordered_json collectives_json(const StepCollectiveCount& c) {
  return {{"allreduces", c.allreduces},
          {"allreduce_bytes", c.allreduce_bytes},
          {"allgathers", c.allgathers},
          {"allgather_bytes", c.allgather_bytes}};
}

bool same(const StepCollectiveCount& a, const StepCollectiveCount& b) {
  return a.allreduces == b.allreduces && a.allreduce_bytes == b.allreduce_bytes && a.allgathers == b.allgathers &&
         a.allgather_bytes == b.allgather_bytes;
}

ordered_json measurement_json(const StepMeasurement& m, const model::Workload& w, bool& bytes_equal) {
  const StepShape& s = m.shape;
  ordered_json parts = ordered_json::object(), raw = ordered_json::object(), intervals = ordered_json::object();
  for (std::size_t p = 0; p < kStepParts; ++p) {
    const char* name = to_string(static_cast<StepPart>(p));
    parts[name] = m.part_s[p];
    raw[name] = m.part_raw_s[p];
    intervals[name] = m.part_intervals[p];
  }
  const StepCollectiveCount expected = expected_collectives(w, s);
  bytes_equal = same(m.collectives, expected);
  return {{"workload", s.workload},
          {"batch", s.batch},
          {"seq_len", s.seq_len},
          {"tp", s.tp},
          {"cp", 1},
          {"dtype", "bf16"},
          {"step_s", model::median(m.step_s)},
          {"step_samples_s", m.step_s},
          {"parts_s", parts},
          {"parts_raw_s", raw},
          {"part_intervals", intervals},
          {"mark_overhead_s", m.mark_overhead_s},
          {"parts_pass_s", m.parts_pass_s},
          {"parts_method", m.parts_method},
          {"weights_bytes", m.bytes.weights},
          {"kv_cache_bytes", m.bytes.kv_cache},
          {"collectives", collectives_json(m.collectives)},
          {"model_collectives", collectives_json(expected)},
          {"collective_bytes_equal_model", bytes_equal},
          {"next_token_ids", m.next_tokens},
          {"non_finite", m.non_finite}};
}

ordered_json point_json(const model::Workload& w, int batch, long long seq_len, int tp) {
  return {{"workload", w.name}, {"batch", batch}, {"seq_len", seq_len}, {"tp", tp}, {"cp", 1}};
}

}  // namespace

int run_step(const StepOptions& options, MpiTransport& transport) {
  if (options.backend != model::RealrunBackend::cuda) throw topologies::InputError(kStepNeedsCuda);
  if (options.cp != 1)
    throw topologies::InputError("step --cp: context parallelism is not run yet (decode runs the combines)");
  if (transport.ranks() != 1)
    throw topologies::InputError("step runs as one process (tp > 1: loopback ranks on its GPU)");
  std::string why;
  if (!cuda::available(why)) throw std::runtime_error("no GPU to run the step on: " + why);
  std::vector<model::Workload> workloads;
  for (const std::string& name : options.workloads) workloads.push_back(workload_named(name));
  const std::vector<long long> lengths = topologies::parse_token_counts(options.seq_len);
  for (const model::Workload& w : workloads) {  // every point's shape is checked before the first runs
    for (int tp : options.tp) step_shape(w, options.batch.front(), lengths.front(), tp);
  }
  std::optional<topologies::OutputFile> out;  // opened before the runs: a bad path fails at once
  if (!options.output.empty()) out.emplace(options.output);
  ordered_json results = ordered_json::array();
  int code = 0;
  for (const model::Workload& w : workloads) {
    for (int tp : options.tp) {
      for (int batch : options.batch) {
        for (long long seq_len : lengths) {
          const StepShape shape = step_shape(w, batch, seq_len, tp);
          ordered_json row = point_json(w, batch, seq_len, tp);
          try {
            const StepMeasurement m = cuda::measure_step(shape, options.warmup, options.iterations, options.seed);
            bool bytes_equal = true;
            row = measurement_json(m, w, bytes_equal);
            if (!bytes_equal || m.non_finite > 0) code = 1;
            std::fprintf(stderr, "step %s batch %d seq %lld tp %d: %.3f ms%s\n", w.name.c_str(), batch, seq_len, tp,
                         1e3 * row["step_s"].get<double>(),
                         bytes_equal ? "" : " (collective bytes differ from the model's)");
          } catch (const topologies::InputError& skipped) {  // does not fit
            row["skipped"] = skipped.what();
            std::fprintf(stderr, "step %s batch %d seq %lld tp %d: skipped: %s\n", w.name.c_str(), batch, seq_len, tp,
                         skipped.what());
          } catch (const std::runtime_error& failed) {
            row["error"] = failed.what();
            std::fprintf(stderr, "step %s batch %d seq %lld tp %d: error: %s\n", w.name.c_str(), batch, seq_len, tp,
                         failed.what());
            code = 1;
          }
          results.push_back(row);
        }
      }
    }
  }
  ordered_json report{
      {"kind", "treering-step"},
      {"implementation", "treering-realrun step: cuBLASLt bf16 GEMMs, the split-KV attention kernel, one CUDA graph"},
      {"provenance", provenance(options.argv, model::RealrunBackend::cuda, transport)},
      {"results", results}};
  if (out) {
    out->stream() << report.dump(1) << '\n';
    out->commit();
  } else {
    std::printf("%s\n", report.dump(1).c_str());
  }
  return code;
}

}  // namespace treering::realrun::app
