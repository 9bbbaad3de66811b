#include "sweep.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cluster_args.hpp"
#include "workload_files.hpp"
#include "simulated_decode.hpp"
#include "treering/topologies/load.hpp"

namespace treering::cli {

std::vector<SweepCase> sweep_cases(const SweepSpec& spec) {
  if (spec.workloads.empty() || spec.seq_lens.empty() || spec.algorithms.empty() || spec.engines.empty()) {
    throw std::invalid_argument("a sweep needs at least one workload, length, algorithm and engine");
  }
  for (const std::string& engine : spec.engines) {
    if (engine != "model" && engine != "sim") throw std::invalid_argument("unknown engine '" + engine + "' (model or sim)");
  }
  const std::vector<int> nodes = spec.nodes.empty() ? std::vector<int>{0} : spec.nodes;
  const std::vector<int> batches = spec.batches.empty() ? std::vector<int>{0} : spec.batches;
  std::vector<SweepCase> cases;
  for (int n : nodes) {
    for (const std::string& workload : spec.workloads) {
      for (int batch : batches) {
        for (long long seq_len : spec.seq_lens) {
          for (model::DecodeAlgorithm algorithm : spec.algorithms) {
            for (const std::string& engine : spec.engines) cases.push_back({n, workload, batch, seq_len, algorithm, engine});
          }
        }
      }
    }
  }
  return cases;
}

namespace {

// What the cases share, built once before the threads start: a topology and a decode model per node count, a
// workload per (name, batch).
struct SweepContext {
  std::map<int, std::unique_ptr<topologies::Topology>> topologies;
  std::map<int, std::unique_ptr<model::DecodeModel>> models;
  std::map<std::pair<std::string, int>, model::Workload> workloads;
  std::shared_ptr<const topologies::ImplProfile> impl;

  SweepContext(const SweepSpec& spec, const std::vector<SweepCase>& cases, const std::vector<std::size_t>& indices)
      : impl(load_impl(spec.impl)) {
    for (std::size_t index : indices) {
      const SweepCase& c = cases.at(index);
      if (!topologies.count(c.nodes)) {
        topologies::ClusterOverrides overrides;
        if (c.nodes > 0) overrides.nodes = c.nodes;
        overrides.settings = spec.settings;
        topologies[c.nodes] = std::make_unique<topologies::Topology>(topologies::build_topology(spec.cluster, overrides));
        models[c.nodes] = std::make_unique<model::DecodeModel>(*topologies[c.nodes]);
      }
      if (!workloads.count({c.workload, c.batch})) {
        model::Workload workload = load_workload(c.workload);
        if (c.batch < 0) throw std::invalid_argument("--batch must be at least 1");
        if (c.batch > 0) workload.batch = c.batch;
        workloads[{c.workload, c.batch}] = workload;
      }
    }
  }
};

DecodeRow run_case(const SweepContext& context, const SweepCase& c, model::TokenSplit split) {
  const model::DecodeModel& decode = *context.models.at(c.nodes);
  const model::Workload& workload = context.workloads.at({c.workload, c.batch});
  model::PlanOptions options;
  options.split = split;
  options.impl = context.impl;
  if (c.engine == "sim") return simulate_decode(decode, workload, c.algorithm, c.seq_len, {}, false, options).row;
  DecodeRow row;
  const model::DecodePlan plan = decode.plan(c.algorithm, workload, c.seq_len, options);
  row.result = decode.evaluate(plan);
  set_context(row, decode, plan);
  row.model_latency_s = row.result.latency_s;  // every sweep row has the column (the simulator's rows need it)
  return row;
}

}  // namespace

// Each simulation runs in a forked child. glibc's malloc is fork-safe from any thread; AddressSanitizer's
// allocator (GCC 12's libasan) is not: a fork while another thread allocates leaves the child deadlocked. Sanitizer
// builds simulate from one thread.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kForkFromThreads = false;
#else
constexpr bool kForkFromThreads = true;
#endif

std::vector<DecodeRow> run_sweep(const SweepSpec& spec, const std::vector<std::size_t>& indices, int jobs,
                                 const std::function<void(std::size_t, std::size_t)>& progress) {
  const std::vector<SweepCase> cases = sweep_cases(spec);
  const bool simulates = std::find(spec.engines.begin(), spec.engines.end(), "sim") != spec.engines.end();
  if (!kForkFromThreads && simulates) jobs = 1;
  const SweepContext context(spec, cases, indices);
  std::vector<DecodeRow> rows(indices.size());
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex mutex;  // guards done, progress and first_error
  std::exception_ptr first_error;
  auto worker = [&] {
    for (std::size_t i = next++; i < indices.size(); i = next++) {
      try {
        rows[i] = run_case(context, cases[indices[i]], spec.split);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::current_exception();
        next = indices.size();  // the others stop at their next case
        return;
      }
      const std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (progress) progress(done, indices.size());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(1, jobs); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
  return rows;
}

namespace {

DecodeRow sweep_columns() {
  DecodeRow first;
  first.model_latency_s = 0;
  return first;
}

}  // namespace

std::string format_row(const DecodeRow& row, const std::string& format) {
  if (format == "csv") return decode_csv_line(row, sweep_columns());
  std::string text = decode_json(row).dump(2);
  std::string indented = "  ";  // one level deeper: an element of the top-level array
  for (char ch : text) {
    indented += ch;
    if (ch == '\n') indented += "  ";
  }
  return indented;
}

std::string join_rows(const std::vector<std::string>& formatted, const std::string& format) {
  std::string out;
  if (format == "csv") {
    out = decode_csv_header(sweep_columns());
    for (const std::string& line : formatted) out += line;
    return out;
  }
  out = "[";
  for (std::size_t i = 0; i < formatted.size(); ++i) out += (i ? ",\n" : "\n") + formatted[i];
  return out + (formatted.empty() ? "]\n" : "\n]\n");
}

}  // namespace treering::cli
