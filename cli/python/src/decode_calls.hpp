// predict, simulate, sweep, tune, sensitivity, columns and units: the module's functions for them.
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_decode_calls(pybind11::module_& m);

}  // namespace treering::python
