// predict, simulate, sweep, tune and sensitivity from Python: the command's rows as records (dicts whose keys are
// the CSV's columns), over the analysis library's case evaluator.
#include "decode_calls.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "json_values.hpp"
#include "treering/analysis/decode_cases.hpp"
#include "treering/analysis/decode_columns.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/sensitivity.hpp"
#include "treering/analysis/sweep.hpp"
#include "treering/analysis/tune.hpp"
#include "treering/analysis/workload_files.hpp"
#include "treering/model/tune.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/topologies/units.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

// A workload preset or file, with the batch replaced when one is given (as --batch).
model::Workload workload_of(const std::string& name, std::optional<int> batch) {
  model::Workload workload = analysis::load_workload(name);
  if (batch) {
    if (*batch < 1) throw topologies::InputError("batch must be at least 1, got " + std::to_string(*batch));
    workload.batch = *batch;
  }
  return workload;
}

std::vector<model::DecodeAlgorithm> algorithms_of(const std::vector<std::string>& names) {
  if (names.empty())
    throw topologies::InputError(
        "no algorithm given (algos: ring, tree, tree-fused, tree-lse, allgather-merge, pass-q, a2a, ag-rs)");
  std::vector<model::DecodeAlgorithm> algorithms;
  for (const std::string& name : names) algorithms.push_back(model::parse_decode_algorithm(name));
  return algorithms;
}

// How the KV cache is shared out ("equal" or "by-speed", as --split): the plan options that carry it.
model::PlanOptions plan_options(const std::string& split, const std::string& impl) {
  model::PlanOptions options;
  options.split = model::parse_token_split(split);
  options.impl = analysis::load_impl(impl);
  return options;
}

void check_lengths(const std::vector<long long>& seq_lens) {
  if (seq_lens.empty()) throw topologies::InputError("no context length given (seq_len)");
  for (long long n : seq_lens) {
    if (n < 1) throw topologies::InputError("a context length must be at least 1 token, got " + std::to_string(n));
  }
}

// One row with the columns the command's CSV and JSON have (decode_columns.hpp: one list feeds all three), as
// Python values: text as str, whole numbers as int, seconds and bytes as float (the model's byte counts may be
// fractional), nothing as None. A row has the optional columns it carries: model_latency_s for simulated and
// swept rows, the step's columns with --scope.
py::dict record(const analysis::DecodeRow& row) {
  py::dict d;
  for (const analysis::DecodeColumn* column : analysis::columns_of(row)) {
    const analysis::Cell cell = column->cell(row);
    const std::string key(column->name);
    if (const auto* text = std::get_if<std::string>(&cell)) {
      d[key.c_str()] = *text;
    } else if (const auto* whole = std::get_if<long long>(&cell)) {
      d[key.c_str()] = *whole;
    } else if (const auto* number = std::get_if<double>(&cell)) {
      d[key.c_str()] = *number;
    } else {
      d[key.c_str()] = py::none();
    }
  }
  return d;
}

// Every column's name and unit (treering.UNITS).
std::vector<std::pair<std::string, std::string>> column_units() {
  std::vector<std::pair<std::string, std::string>> units;
  for (const analysis::DecodeColumn& column : analysis::decode_columns()) units.emplace_back(column.name, column.unit);
  return units;
}

// The names of the columns every row has, in order (treering.COLUMNS).
std::vector<std::string> always_columns() {
  std::vector<std::string> names;
  for (const analysis::DecodeColumn& column : analysis::decode_columns()) {
    if (column.carried == analysis::Carried::always) names.emplace_back(column.name);
  }
  return names;
}

py::list records(const std::vector<analysis::DecodeRow>& rows) {
  py::list list;
  for (const analysis::DecodeRow& row : rows) list.append(record(row));
  return list;
}

// What predict and simulate take beyond the lengths and algorithms: the layout (tp x cp, placement, scope) and
// the generation estimate, as the command's --tp, --cp, --placement, --tp-in-domain, --scope, --tokens, --prefill.
struct CaseChoice {
  analysis::LayoutChoice layout;
  analysis::GenerationChoice generation;
};

CaseChoice case_choice(std::optional<int> tp, std::optional<int> cp, const std::string& replicas,
                       const std::string& placement, bool tp_in_domain, const std::string& scope,
                       std::optional<long long> tokens, bool prefill) {
  if (tp && *tp < 1) throw topologies::InputError("tp must be at least 1, got " + std::to_string(*tp));
  if (cp && *cp < 1) throw topologies::InputError("cp must be at least 1, got " + std::to_string(*cp));
  if (tokens && *tokens < 1) throw topologies::InputError("tokens must be at least 1, got " + std::to_string(*tokens));
  CaseChoice choice;
  choice.layout.tp = tp;
  choice.layout.cp = cp;
  choice.layout.replicas = replicas;
  choice.layout.placement = model::parse_layout_order(placement);
  choice.layout.tp_in_domain = tp_in_domain;
  choice.layout.scope = model::parse_scope(scope);
  choice.generation = {tokens, prefill};
  return choice;
}

// predict's and simulate's cases (one workload and batch; lengths outer, algorithms inner), checked as they arrive.
analysis::DecodeRequest decode_request(const std::vector<long long>& seq_lens, const std::vector<std::string>& algos,
                                       const std::string& workload_name, std::optional<int> batch,
                                       const std::string& split, bool check_memory, const std::string& impl,
                                       const CaseChoice& choice) {
  analysis::DecodeRequest request;
  request.workloads = {workload_of(workload_name, batch)};
  request.options = plan_options(split, impl);
  request.algorithms = algorithms_of(algos);
  check_lengths(seq_lens);
  request.seq_lens = seq_lens;
  request.layout = choice.layout;
  request.generation = choice.generation;
  request.check_memory = check_memory;
  return request;
}

// The analytical model, lengths outer and algorithms inner (as `treering predict`); with check_memory a case
// that does not fit in a GPU's memory is an error, as on the command line.
py::list predict(const Cluster& cluster, const std::vector<long long>& seq_lens, const std::vector<std::string>& algos,
                 const std::string& workload_name, std::optional<int> batch, const std::string& split,
                 bool check_memory, const std::string& impl, const CaseChoice& choice) {
  return records(analysis::predict_rows(
      cluster.topology(), decode_request(seq_lens, algos, workload_name, batch, split, check_memory, impl, choice)));
}

// The simulator, in the same order. Each replay runs in a child process (sim::replay_plan forks); the C++ work
// touches no Python object, so the GIL is let go meanwhile and other Python threads keep running.
py::list simulate(const Cluster& cluster, const std::vector<long long>& seq_lens, const std::vector<std::string>& algos,
                  const std::string& workload_name, std::optional<int> batch, const std::string& split,
                  bool check_memory, const std::string& impl, const CaseChoice& choice) {
  const analysis::DecodeRequest request =
      decode_request(seq_lens, algos, workload_name, batch, split, check_memory, impl, choice);
  std::vector<analysis::DecodeRow> rows;
  {
    const py::gil_scoped_release release;
    for (analysis::SimulatedCase& c : analysis::simulate_cases(cluster.topology(), request, {}))
      rows.push_back(std::move(c.row));
  }
  return records(rows);
}

// A whole sweep (analysis::run_sweep: every case, in its fixed order, in `jobs` worker processes) on one layout (tp x
// cp, placement, scope: predict's). Empty nodes or batches: the cluster file's count, each workload's own batch.
py::list sweep(const std::string& cluster, const std::vector<int>& nodes, const std::vector<long long>& seq_lens,
               const std::vector<std::string>& workloads, const std::vector<int>& batches,
               const std::vector<std::string>& algos, const std::vector<std::string>& engines,
               const std::vector<std::pair<std::string, std::string>>& settings, const std::string& split, int jobs,
               const std::string& impl, const CaseChoice& choice) {
  if (jobs < 1) throw topologies::InputError("jobs must be at least 1, got " + std::to_string(jobs));
  // The sweep reads 0 as "the file's own": a 0 given on purpose is a mistake, not a default.
  for (int n : nodes) {
    if (n < 1) throw topologies::InputError("nodes must be at least 1, got " + std::to_string(n));
  }
  for (int b : batches) {
    if (b < 1) throw topologies::InputError("batch must be at least 1, got " + std::to_string(b));
  }
  check_lengths(seq_lens);
  analysis::SweepSpec spec;
  spec.cluster = cluster;
  spec.nodes = nodes;
  spec.workloads = workloads;
  spec.batches = batches;
  spec.seq_lens = seq_lens;
  spec.algorithms = algorithms_of(algos);
  spec.engines.clear();
  for (const std::string& engine : engines) spec.engines.push_back(validate::parse_engine(engine));
  spec.split = model::parse_token_split(split);
  spec.impl = impl;
  spec.layout = choice.layout;
  for (const auto& [path, value] : settings) spec.settings.push_back({path, value});
  std::vector<std::size_t> indices(analysis::sweep_cases(spec).size());
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  std::vector<analysis::DecodeRow> rows;
  {
    const py::gil_scoped_release release;
    rows = analysis::run_sweep(spec, indices, jobs);
  }
  return records(rows);
}

// The distinct combine strategies model::tune tries, fastest first, equivalents folded in as `treering tune` folds
// them (analysis::fold_equivalents): rank (from 1), its description, the count of equivalents folded into it, its
// algorithm, the model's latency with its band, and whether that band meets the best's.
// `treering tune --format json`'s strategy records, an unbounded latency_s_high as inf (not None).
py::list tune(const Cluster& cluster, long long seq_len, const std::string& workload_name, std::optional<int> batch,
              const std::string& impl, int confirm) {
  if (confirm < 0) throw topologies::InputError("confirm must be at least 0");
  check_lengths({seq_len});
  const analysis::TuneRequest request{workload_of(workload_name, batch), seq_len, {},
                                      plan_options("equal", impl),       confirm, {}};
  analysis::TuneReport report;
  {
    const py::gil_scoped_release release;
    report = analysis::tune_report(cluster.topology(), request);
  }
  py::list records = from_json(analysis::tune_strategies_json(report));
  for (py::handle record : records) {
    py::dict d = py::reinterpret_borrow<py::dict>(record);
    if (d["latency_s_high"].is_none()) d["latency_s_high"] = std::numeric_limits<double>::infinity();
  }
  return records;
}

// The elasticities of analysis::sensitivity (`treering sensitivity`), one record per (parameter, algorithm) in the
// order of the parameters: parameter, value (as written), algo, latency_s (unscaled), elasticity.
py::list sensitivity(const Cluster& cluster, long long seq_len, const std::vector<std::string>& parameters,
                     const std::vector<std::string>& algos, const std::string& workload_name, std::optional<int> batch,
                     double step, const std::string& split, const std::string& impl) {
  analysis::SensitivityRequest request;
  request.cluster_text = cluster.text();
  request.source_name = cluster.source_name();
  request.nodes = cluster.recipe().nodes;
  request.gpus_per_node = cluster.recipe().gpus_per_node;
  request.workload = workload_of(workload_name, batch);
  check_lengths({seq_len});
  request.seq_len = seq_len;
  request.algorithms = algorithms_of(algos);
  request.options = plan_options(split, impl);
  request.parameters = parameters;
  request.step = step;
  const analysis::SensitivityResult result = analysis::sensitivity(request);
  py::list records;
  for (const analysis::SensitivityRow& row : result.rows) {
    for (std::size_t a = 0; a < request.algorithms.size(); ++a) {
      py::dict d;
      d["parameter"] = row.parameter;
      d["value"] = row.value;
      d["algo"] = model::to_string(request.algorithms[a]);
      d["latency_s"] = result.latency_s[a];
      d["elasticity"] = row.elasticities[a];
      records.append(d);
    }
  }
  return records;
}

}  // namespace

void add_decode_calls(py::module_& m) {
  m.def("columns", &always_columns, "The columns every predict/simulate/sweep row has, in the CSV's order.");
  m.def("units", &column_units, "Every column's unit (s, bytes, tokens, GPUs, ...; empty for text and plain counts).");
  // predict and simulate: the cases' arguments, then the layout and generation ones (CaseChoice).
  auto decode_rows = [&m](const char* name, auto rows_of) {
    m.def(
        name,
        [rows_of](const Cluster& cluster, const std::vector<long long>& seq_lens, const std::vector<std::string>& algos,
                  const std::string& workload, std::optional<int> batch, const std::string& split, bool check_memory,
                  const std::string& impl, std::optional<int> tp, std::optional<int> cp, const std::string& replicas,
                  const std::string& placement, bool tp_in_domain, const std::string& scope,
                  std::optional<long long> tokens, bool prefill, std::optional<int> dcp, bool dp_attention,
                  std::optional<int> ep, const std::string& ep_kernel, int micro_batches) {
          CaseChoice choice = case_choice(tp, cp, replicas, placement, tp_in_domain, scope, tokens, prefill);
          choice.layout.dcp = dcp;
          choice.layout.dp_attention = dp_attention;
          choice.layout.ep = ep;
          choice.layout.experts.kernel = model::parse_ep_kernel(ep_kernel);
          choice.layout.experts.micro_batches = micro_batches;
          return rows_of(cluster, seq_lens, algos, workload, batch, split, check_memory, impl, choice);
        },
        py::arg("cluster"), py::arg("seq_lens"), py::arg("algos"), py::arg("workload"), py::arg("batch"),
        py::arg("split"), py::arg("check_memory"), py::arg("impl"), py::arg("tp"), py::arg("cp"), py::arg("replicas"),
        py::arg("placement"), py::arg("tp_in_domain"), py::arg("scope"), py::arg("tokens"), py::arg("prefill"),
        py::arg("dcp"), py::arg("dp_attention"), py::arg("ep"), py::arg("ep_kernel"), py::arg("micro_batches"));
  };
  decode_rows("predict", &predict);
  decode_rows("simulate", &simulate);
  m.def(
      "sweep",
      [](const std::string& cluster, const std::vector<int>& nodes, const std::vector<long long>& seq_lens,
         const std::vector<std::string>& workloads, const std::vector<int>& batches,
         const std::vector<std::string>& algos, const std::vector<std::string>& engines,
         const std::vector<std::pair<std::string, std::string>>& settings, const std::string& split, int jobs,
         const std::string& impl, std::optional<int> tp, std::optional<int> cp, const std::string& replicas,
         const std::string& placement, bool tp_in_domain, const std::string& scope) {
        return sweep(cluster, nodes, seq_lens, workloads, batches, algos, engines, settings, split, jobs, impl,
                     case_choice(tp, cp, replicas, placement, tp_in_domain, scope, std::nullopt, false));
      },
      py::arg("cluster"), py::arg("nodes"), py::arg("seq_lens"), py::arg("workloads"), py::arg("batches"),
      py::arg("algos"), py::arg("engines"), py::arg("settings"), py::arg("split"), py::arg("jobs"), py::arg("impl"),
      py::arg("tp"), py::arg("cp"), py::arg("replicas"), py::arg("placement"), py::arg("tp_in_domain"),
      py::arg("scope"));
  m.def("tune", &tune, py::arg("cluster"), py::arg("seq_len"), py::arg("workload"), py::arg("batch"), py::arg("impl"),
        py::arg("confirm"));
  m.def("sensitivity", &sensitivity, py::arg("cluster"), py::arg("seq_len"), py::arg("parameters"), py::arg("algos"),
        py::arg("workload"), py::arg("batch"), py::arg("step"), py::arg("split"), py::arg("impl"));
  m.attr("SENSITIVITY_PARAMETERS") = py::tuple(py::cast(treering::analysis::default_sensitivity_parameters()));
}

}  // namespace treering::python
