#include "treering/analysis/sweep.hpp"

#include <map>
#include <memory>
#include <stdexcept>

#include "treering/analysis/workload_files.hpp"
#include "treering/analysis/simulated_decode.hpp"
#include "treering/analysis/sweep_wire.hpp"
#include "treering/analysis/sweep_workers.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::analysis {

std::vector<SweepCase> sweep_cases(const SweepSpec& spec) {
  if (spec.workloads.empty() || spec.seq_lens.empty() || spec.algorithms.empty() || spec.engines.empty()) {
    throw topologies::InputError("a sweep needs at least one workload, length, algorithm and engine");
  }
  const std::vector<int> nodes = spec.nodes.empty() ? std::vector<int>{0} : spec.nodes;
  const std::vector<int> batches = spec.batches.empty() ? std::vector<int>{0} : spec.batches;
  std::vector<SweepCase> cases;
  for (int n : nodes) {
    for (const std::string& workload : spec.workloads) {
      for (int batch : batches) {
        for (long long seq_len : spec.seq_lens) {
          for (model::DecodeAlgorithm algorithm : spec.algorithms) {
            for (validate::Engine engine : spec.engines)
              cases.push_back({n, workload, batch, seq_len, algorithm, engine});
          }
        }
      }
    }
  }
  return cases;
}

namespace {

// What the cases share, built once before the workers start: a topology and the layout's model per node count, a
// workload per (name, batch).
struct SweepContext {
  std::map<int, std::unique_ptr<topologies::Topology>> topologies;
  std::map<int, std::unique_ptr<model::LayoutModel>> layouts;
  std::map<std::pair<std::string, int>, model::Workload> workloads;
  std::shared_ptr<const topologies::ImplProfile> impl;

  SweepContext(const SweepSpec& spec, const std::vector<SweepCase>& cases, const std::vector<std::size_t>& indices)
      : impl(load_impl(spec.impl)) {
    for (std::size_t index : indices) {
      const SweepCase& c = cases.at(index);
      if (!topologies.count(c.nodes)) add_nodes(spec, c.nodes);
      if (!workloads.count({c.workload, c.batch})) {
        model::Workload workload = load_workload(c.workload);
        if (c.batch < 0) throw topologies::InputError("--batch must be at least 1");
        if (c.batch > 0) workload.batch = c.batch;
        workloads[{c.workload, c.batch}] = workload;
      }
    }
  }

  // The cluster at `nodes` nodes (0: the file's count) and the layout placed on its GPUs; a layout that does not
  // fit them is an error naming the node count.
  void add_nodes(const SweepSpec& spec, int nodes) {
    topologies::ClusterOverrides overrides;
    if (nodes > 0) overrides.nodes = nodes;
    overrides.settings = spec.settings;
    auto topology = std::make_unique<topologies::Topology>(topologies::build_topology(spec.cluster, overrides));
    try {
      layouts[nodes] = std::make_unique<model::LayoutModel>(*topology, layout_groups(spec.layout, *topology, {}));
    } catch (const topologies::InputError& error) {
      if (error.located()) throw;  // a file's error, as it was
      const std::string where =
          nodes > 0 ? std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") : "the cluster's nodes";
      throw topologies::InputError("at " + where + " (" + std::to_string(topology->gpu_count()) +
                                   " GPUs): " + error.what());
    }
    topologies[nodes] = std::move(topology);
  }
};

// predict's row, or simulate's, for the case on the sweep's layout (check_memory off: a case that does not fit is
// computed all the same).
DecodeRow run_case(const SweepContext& context, const SweepSpec& spec, const SweepCase& c) {
  const model::LayoutModel& layouts = *context.layouts.at(c.nodes);
  const model::Workload& workload = context.workloads.at({c.workload, c.batch});
  model::PlanOptions options;
  options.split = spec.split;
  options.impl = context.impl;
  if (c.engine == validate::Engine::sim) {
    return simulate_row(spec.layout, {}, {}, layouts, workload, c.seq_len, c.algorithm, options, false).row;
  }
  DecodeRow row = predict_row(spec.layout, {}, layouts, workload, c.seq_len, c.algorithm, options, false);
  row.model_latency_s = row.result.latency_s;  // every sweep row has the column (the simulator's rows need it)
  return row;
}

}  // namespace

namespace {

// "case 3 (2 nodes, paper-mha16, batch 8, 80000 tokens, ring, sim)", for a worker that died computing it.
std::string describe_case(std::size_t index, const SweepCase& c) {
  return "case " + std::to_string(index) + " (" +
         (c.nodes > 0 ? std::to_string(c.nodes) + (c.nodes == 1 ? " node" : " nodes") : "the cluster's nodes") + ", " +
         c.workload + ", " + (c.batch > 0 ? "batch " + std::to_string(c.batch) : "its batch") + ", " +
         std::to_string(c.seq_len) + " tokens, " + model::to_string(c.algorithm) + ", " +
         validate::to_string(c.engine) + ")";
}

}  // namespace

std::vector<DecodeRow> run_sweep(const SweepSpec& spec, const std::vector<std::size_t>& indices, int jobs,
                                 const std::function<void(std::size_t, std::size_t)>& progress) {
  const std::vector<SweepCase> cases = sweep_cases(spec);
  const SweepContext context(spec, cases, indices);  // before the workers: they inherit it
  std::vector<DecodeRow> rows(indices.size());
  std::size_t done = 0;
  auto keep = [&](std::size_t i, DecodeRow row) {
    rows[i] = std::move(row);
    ++done;
    if (progress) progress(done, indices.size());
  };
  if (jobs <= 1 || indices.size() <= 1) {
    for (std::size_t i = 0; i < indices.size(); ++i) keep(i, run_case(context, spec, cases.at(indices[i])));
    return rows;
  }
  WorkerItems items;
  items.count = indices.size();
  items.workers = jobs;
  items.compute = [&](std::size_t i) { return encode_row(run_case(context, spec, cases.at(indices[i]))); };
  items.receive = [&](std::size_t i, const std::string& bytes) { keep(i, decode_row(bytes)); };
  items.describe = [&](std::size_t i) { return describe_case(indices[i], cases.at(indices[i])); };
  run_in_worker_processes(items);
  return rows;
}

namespace {

// A row with what every row of the sweep carries: model_latency_s, and the step's columns with --scope layer|step.
DecodeRow sweep_columns(const SweepSpec& spec) {
  DecodeRow first;
  first.model_latency_s = 0;
  if (spec.layout.scope != model::Scope::attention) first.step = model::StepResult{};
  return first;
}

}  // namespace

std::string format_row(const DecodeRow& row, const std::string& format, const SweepSpec& spec) {
  if (format == "csv") return decode_csv_line(row, sweep_columns(spec));
  std::string text = decode_json(row).dump(2);
  std::string indented = "  ";  // one level deeper: an element of the top-level array
  for (char ch : text) {
    indented += ch;
    if (ch == '\n') indented += "  ";
  }
  return indented;
}

std::string join_rows(const std::vector<std::string>& formatted, const std::string& format, const SweepSpec& spec) {
  std::string out;
  if (format == "csv") {
    out = decode_csv_header(sweep_columns(spec));
    for (const std::string& line : formatted) out += line;
    return out;
  }
  out = "[";
  for (std::size_t i = 0; i < formatted.size(); ++i) out += (i ? ",\n" : "\n") + formatted[i];
  return out + (formatted.empty() ? "]\n" : "\n]\n");
}

}  // namespace treering::analysis
