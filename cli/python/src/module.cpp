// The compiled half of the Python package `treering` (treering/_treering): clusters, names, errors, and the
// calls of the other files here (decode_calls: predict, simulate, sweep, tune, sensitivity; report_calls:
// collective, plan, validate; calibrate; crossover; plot; enums), over the same libraries as the `treering`
// command. Results are plain dicts and lists whose keys are the command's CSV and JSON names (so
// pandas.DataFrame(rows) takes them as they are). The arguments arrive here already in their C++ types; the
// pure-Python half (treering/__init__.py) turns what people write ("1M", {"nics.bandwidth": "800Gb/s"}, a single
// algorithm) into them and carries the documentation.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "calibrate.hpp"
#include "cluster.hpp"
#include "crossover.hpp"
#include "decode_calls.hpp"
#include "enums.hpp"
#include "plot.hpp"
#include "report_calls.hpp"
#include "treering/analysis/workload_files.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/error_exit.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/settings.hpp"
#include "treering/topologies/units.hpp"

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
  add_decode_calls(m);
  add_report_calls(m);
  add_calibrate(m);
  add_enums(m);
}
