#include "crossover.hpp"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "json_values.hpp"
#include "treering/analysis/crossover.hpp"
#include "treering/analysis/crossover_tp.hpp"
#include "treering/topologies/input_error.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

// As `treering crossover --format json` (vs "tp": `--vs tp`; algos there: the combines tried, empty: all). The
// computation runs without the GIL: the two algorithms' sweep may fork worker processes (jobs).
py::object crossover(const analysis::CrossoverRequest& request, const std::string& vs) {
  if (!vs.empty() && vs != "tp") throw topologies::InputError("vs: 'tp' or None, got '" + vs + "'");
  nlohmann::ordered_json records;
  {
    const py::gil_scoped_release release;
    records = vs == "tp" ? analysis::cp_vs_tp_json(analysis::run_cp_vs_tp(request))
                         : analysis::crossover_json(analysis::run_crossover(request));
  }
  return from_json(records);
}

}  // namespace

void add_crossover(py::module_& m) {
  m.def(
      "crossover",
      [](const std::string& cluster, const std::vector<int>& nodes, const std::vector<long long>& seq_lens,
         const std::vector<std::string>& algos, const std::string& workload, const std::vector<int>& batches,
         const std::string& engine, const std::vector<std::pair<std::string, std::string>>& settings,
         const std::string& impl, const std::string& vs, int jobs) {
        analysis::CrossoverRequest request{.cluster = cluster,
                                           .nodes = nodes,
                                           .workload = workload,
                                           .batches = batches,
                                           .seq_lens = seq_lens,
                                           .algorithms = algos,
                                           .engine = validate::parse_engine(engine),
                                           .settings = {},
                                           .impl = impl,
                                           .jobs = jobs};
        for (const auto& [path, value] : settings) request.settings.push_back({path, value});
        return crossover(request, vs);
      },
      py::arg("cluster"), py::arg("nodes"), py::arg("seq_lens"), py::arg("algos"), py::arg("workload"),
      py::arg("batches"), py::arg("engine"), py::arg("settings"), py::arg("impl"), py::arg("vs"), py::arg("jobs"));
}

}  // namespace treering::python
