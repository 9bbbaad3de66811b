// treering.plot(): `treering plot` from Python (cli/src/plot_chart.hpp), on a file a command wrote or on the
// records predict(), simulate() and sweep() return.
#include "plot.hpp"

#include <pybind11/stl.h>

#include <map>
#include <stdexcept>

#include "plot_chart.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/input_error.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

cli::PlotSpec plot_spec(const std::string& x, const std::string& y, const std::vector<std::string>& series, bool log_x,
                        bool log_y, const std::string& title) {
  return {x, y, series, log_x, log_y, title};
}

// A value of a record as a cell: None empty, str text, bool "true"/"false", int and float numbers.
cli::TableCell cell_of(const py::handle& value) {
  if (value.is_none()) return {};
  if (py::isinstance<py::bool_>(value)) return {value.cast<bool>() ? "true" : "false", std::nullopt};
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>(), std::nullopt};
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    return {py::str(value).cast<std::string>(), value.cast<double>()};
  }
  throw topologies::InputError("plot: a record's value must be None, str, bool, int or float, not " +
                               py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

// The records as a table: the columns in the order they first appear, a record without one an empty cell there.
cli::DataTable table_of(const py::list& records) {
  if (records.empty()) throw topologies::InputError("plot: no records");
  cli::DataTable table{"records", {}, {}};
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::pair<std::size_t, cli::TableCell>>> cells;
  for (const py::handle& record : records) {
    if (!py::isinstance<py::dict>(record))
      throw topologies::InputError("plot: records are dicts (as predict() returns)");
    auto& row = cells.emplace_back();
    for (const auto& [key, value] : record.cast<py::dict>()) {
      const std::string name = py::str(key).cast<std::string>();
      const auto [at, added] = index.emplace(name, table.columns.size());
      if (added) table.columns.push_back(name);
      row.emplace_back(at->second, cell_of(value));
    }
  }
  for (auto& row : cells) {
    auto& out = table.rows.emplace_back(table.columns.size());
    for (auto& [column, cell] : row) out[column] = std::move(cell);
  }
  return table;
}

}  // namespace

void add_plot(py::module_& m) {
  m.def(
      "plot_file",
      [](const std::string& file, const std::string& x, const std::string& y, const std::vector<std::string>& series,
         bool log_x, bool log_y, const std::string& title, const std::string& output) {
        const topologies::InputFilesScope inputs;  // `output` may not be `file`, by any name
        cli::plot_file(file, plot_spec(x, y, series, log_x, log_y, title), output);
      },
      py::arg("file"), py::arg("x"), py::arg("y"), py::arg("series"), py::arg("log_x"), py::arg("log_y"),
      py::arg("title"), py::arg("output"));
  m.def(
      "plot_records",
      [](const py::list& records, const std::string& x, const std::string& y, const std::vector<std::string>& series,
         bool log_x, bool log_y, const std::string& title, const std::string& output) {
        cli::chart_kind(output);
        cli::write_chart(cli::plot_chart(table_of(records), plot_spec(x, y, series, log_x, log_y, title)), output);
      },
      py::arg("records"), py::arg("x"), py::arg("y"), py::arg("series"), py::arg("log_x"), py::arg("log_y"),
      py::arg("title"), py::arg("output"));
}

}  // namespace treering::python
