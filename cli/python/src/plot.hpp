// treering.plot()'s compiled half: plot_file (a CSV or JSON file a command wrote) and plot_records (the records
// predict(), simulate(), sweep() return), both drawn as `treering plot` draws them.
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_plot(pybind11::module_& m);

}  // namespace treering::python
