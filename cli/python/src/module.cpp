// The compiled half of the Python package `treering` (treering/_treering): clusters, predict, simulate, sweep
// and tune over the same libraries as the `treering` command, results as lists of plain dicts whose keys are
// the command's CSV columns (so pandas.DataFrame(rows) takes them as they are). The arguments arrive here
// already in their C++ types; the pure-Python half (treering/__init__.py) turns what people write ("1M",
// {"nics.bandwidth": "800Gb/s"}, a single algorithm) into them and carries the documentation.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "calibrate.hpp"
#include "cluster.hpp"
#include "crossover.hpp"
#include "enums.hpp"
#include "json_values.hpp"
#include "treering/analysis/collective_report.hpp"
#include "treering/analysis/decode_cases.hpp"
#include "treering/analysis/decode_columns.hpp"
#include "treering/analysis/decode_output.hpp"
#include "treering/analysis/kernel_validation.hpp"
#include "treering/analysis/plan_report.hpp"
#include "plot.hpp"
#include "treering/analysis/network_calibration.hpp"
#include "treering/analysis/validate_report.hpp"
#include "treering/model/statistics.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/analysis/simulated_decode.hpp"
#include "treering/analysis/sensitivity.hpp"
#include "treering/analysis/sweep.hpp"
#include "treering/analysis/tune.hpp"
#include "treering/model/tune.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/error_exit.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/topologies/units.hpp"
#include "treering/analysis/workload_files.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

// (path, value, factor) from Python: a set when factor is 0, a scale otherwise (cluster.hpp).
using EditTuple = std::tuple<std::string, std::string, double>;

std::vector<Edit> edits_of(const std::vector<EditTuple>& tuples) {
  std::vector<Edit> edits;
  for (const auto& [path, value, factor] : tuples) edits.push_back({path, value, factor});
  return edits;
}

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
  return {{tp, cp, replicas, model::parse_layout_order(placement), tp_in_domain, model::parse_scope(scope)},
          {tokens, prefill}};
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

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const topologies::Preset& preset : topologies::cluster_presets()) names.push_back(preset.name);
  return names;
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const model::Workload& workload : model::workload_presets()) names.push_back(workload.name);
  return names;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (model::DecodeAlgorithm algorithm : model::all_decode_algorithms()) names.push_back(model::to_string(algorithm));
  return names;
}

std::vector<std::string> default_algorithm_names() {
  std::vector<std::string> names;
  for (model::DecodeAlgorithm algorithm : model::paper_decode_algorithms())
    names.push_back(model::to_string(algorithm));
  return names;
}

// Bad input (InputError, "FILE:LINE:COL: error: ...", and std::invalid_argument) becomes treering.InputError,
// a ValueError, with the library's message unchanged. Everything else keeps pybind11's mapping (RuntimeError
// for std::runtime_error and other std::exception). The class object lives as long as the process: it is
// never released, so nothing Python-owned is destroyed after the interpreter has finalised.
void add_input_error(py::module_& m) {
  static PyObject* input_error = PyErr_NewExceptionWithDoc(
      "treering.InputError", "Bad input: a cluster or workload file, a value or an argument. A ValueError.",
      PyExc_ValueError, nullptr);
  if (input_error == nullptr) throw py::error_already_set();
  m.add_object("InputError", py::handle(input_error));
  // The command's mapping (topologies::error_exit): bad input raises InputError with its message (what(), as the
  // command prints it less a bare "error: "); anything else but pybind11's own errors and out of memory (MemoryError)
  // is a bug: RuntimeError("internal error: ... please report it").
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const topologies::InputError& e) {
      PyErr_SetString(input_error, e.what());
    } catch (const py::builtin_exception&) {
      throw;  // py::value_error, py::type_error, ...: pybind11's translator raises them as themselves
    } catch (const py::error_already_set&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (...) {
      PyErr_SetString(PyExc_RuntimeError, topologies::error_exit(std::current_exception()).message.c_str());
    }
  });
}

void add_cluster(py::module_& m) {
  py::class_<Cluster, std::shared_ptr<Cluster>>(m, "Cluster", "A loaded cluster (use treering.load_cluster)")
      .def_property_readonly("name", [](const Cluster& c) { return c.topology().spec().name; })
      .def_property_readonly("description", [](const Cluster& c) { return c.topology().spec().description; })
      .def_property_readonly("source", [](const Cluster& c) { return c.recipe().source; })
      .def_property_readonly("nodes", [](const Cluster& c) { return c.topology().node_count(); })
      .def_property_readonly("gpus", [](const Cluster& c) { return c.topology().gpu_count(); })
      .def_property_readonly("domains", [](const Cluster& c) { return c.topology().domain_count(); })
      .def(
          "with_edits",
          [](const Cluster& c, const std::vector<EditTuple>& more) {
            return std::make_shared<Cluster>(c.with_edits(edits_of(more)));
          },
          py::arg("edits"))
      .def("setting_values", &Cluster::setting_values, py::arg("path"));
  m.def(
      "load_cluster",
      [](const std::string& source, std::optional<int> nodes, std::optional<int> gpus_per_node,
         const std::vector<EditTuple>& edits) {
        return std::make_shared<Cluster>(ClusterRecipe{source, nodes, gpus_per_node, edits_of(edits)});
      },
      py::arg("source"), py::arg("nodes"), py::arg("gpus_per_node"), py::arg("edits"));
}

// The collective model over sizes, as `treering collective --format json`: one dict per size.
py::object collective(const Cluster& cluster, const analysis::CollectiveChoice& choice) {
  const analysis::CollectiveReport report = analysis::collective_report(cluster.topology(), choice);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const analysis::BandedEstimate& estimate : report.estimates)
    list.push_back(analysis::estimate_json(estimate, report.group));
  py::object rows = from_json(list);
  if (!report.warnings.empty()) {
    py::module_::import("warnings")
        .attr("warn")(report.warnings.front() + (report.warnings.size() > 1
                                                     ? " (and " + std::to_string(report.warnings.size() - 1) + " more)"
                                                     : ""));
  }
  return rows;
}

// The deployment planner, as `treering plan --format json`: one dict with the ranked choices.
py::object plan(const Cluster& cluster, const analysis::PlanChoice& choice) {
  analysis::PlanReport report;
  {
    const py::gil_scoped_release release;
    report = analysis::plan_report(cluster.topology(), choice);
  }
  return from_json(analysis::plan_json(cluster.topology(), choice, report));
}

// `treering validate --format json`: collective measurements and timed decodes (cases and summary per engine), or
// attention benchmarks kernel by kernel, or decode steps part by part (the model alone: engines are not asked).
py::object validate_files(const Cluster& cluster, const std::vector<std::string>& files,
                          const std::vector<std::string>& engine_names) {
  if (files.empty()) throw topologies::InputError("no measurement file given");
  std::vector<validate::Engine> engines;
  for (const std::string& name : engine_names) engines.push_back(validate::parse_engine(name));
  if (engines.empty()) throw topologies::InputError("no engine given (model, sim)");
  const analysis::KernelFiles kind = analysis::kernel_files(files);
  nlohmann::ordered_json json;
  std::vector<std::string> warnings;
  {
    const py::gil_scoped_release release;
    const topologies::ClusterSpec& spec = cluster.topology().spec();
    if (kind == analysis::KernelFiles::steps) {
      const analysis::StepValidation validation = analysis::validate_steps(spec, files);
      warnings = validation.notes;
      json = analysis::step_validation_json(validation);
    } else if (kind == analysis::KernelFiles::attention) {
      json = analysis::attention_validation_json(analysis::validate_attention(spec, files));
    } else {
      const analysis::ValidateReport report = analysis::validate_measurements(cluster.topology(), files, engines);
      warnings = report.warnings;
      json = analysis::validate_json(cluster.topology(), report);
    }
  }
  for (const std::string& warning : warnings) py::module_::import("warnings").attr("warn")(warning);
  return from_json(json);
}

}  // namespace
}  // namespace treering::python

PYBIND11_MODULE(_treering, m) {
  using namespace treering::python;
  m.doc() = "treering's compiled core; use the package `treering`, which wraps it.";
  add_input_error(m);
  add_cluster(m);
  add_plot(m);
  add_crossover(m);
  m.def("presets", &preset_names);
  m.def("workloads", &workload_names);
  m.def("algorithms", &algorithm_names);
  m.def("default_algorithms", &default_algorithm_names);
  m.def(
      "parse_token_counts", [](const std::string& text) { return treering::topologies::parse_token_counts(text); },
      py::arg("text"));
  m.def(
      "parse_setting",
      [](const std::string& text) {
        const treering::topologies::Setting s = treering::topologies::parse_setting(text);
        return std::make_pair(s.path, s.value);
      },
      py::arg("text"));
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
                  std::optional<long long> tokens, bool prefill) {
          return rows_of(cluster, seq_lens, algos, workload, batch, split, check_memory, impl,
                         case_choice(tp, cp, replicas, placement, tp_in_domain, scope, tokens, prefill));
        },
        py::arg("cluster"), py::arg("seq_lens"), py::arg("algos"), py::arg("workload"), py::arg("batch"),
        py::arg("split"), py::arg("check_memory"), py::arg("impl"), py::arg("tp"), py::arg("cp"), py::arg("replicas"),
        py::arg("placement"), py::arg("tp_in_domain"), py::arg("scope"), py::arg("tokens"), py::arg("prefill"));
  };
  decode_rows("predict", &predict);
  decode_rows("simulate", &simulate);
  m.def(
      "collective",
      [](const Cluster& cluster, const std::string& op, const std::string& bytes, const std::vector<int>& gpus,
         const std::string& algorithm, const std::string& protocol, const std::string& algorithms,
         const std::vector<std::string>& engines) {
        std::vector<treering::validate::Engine> parsed;
        for (const std::string& name : engines) parsed.push_back(treering::validate::parse_engine(name));
        return collective(cluster, {op, bytes, gpus, algorithm, protocol, algorithms, parsed, false});
      },
      py::arg("cluster"), py::arg("op"), py::arg("bytes"), py::arg("gpus"), py::arg("algorithm"), py::arg("protocol"),
      py::arg("algorithms"), py::arg("engines"));
  m.def("validate", &validate_files, py::arg("cluster"), py::arg("files"), py::arg("engines"));
  add_calibrate(m);
  add_enums(m);
  m.def(
      "plan",
      [](const Cluster& cluster, long long seq_len, const std::string& workload, int batch, int gpus_max,
         const std::vector<std::string>& combines, const std::string& impl, int confirm) {
        if (batch < 0 || gpus_max < 0 || confirm < 0)
          throw treering::topologies::InputError("batch, gpus_max and confirm must be at least 0 (0: the default)");
        return plan(cluster, {workload, seq_len, batch, gpus_max, combines, impl, confirm});
      },
      py::arg("cluster"), py::arg("seq_len"), py::arg("workload"), py::arg("batch"), py::arg("gpus_max"),
      py::arg("combines"), py::arg("impl"), py::arg("confirm"));
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
