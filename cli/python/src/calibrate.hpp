// calibrate(): `treering calibrate` from Python, both kinds of run (analysis/calibration_runs.hpp).
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_calibrate(pybind11::module_& m);

}  // namespace treering::python
