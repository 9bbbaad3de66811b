// collective, plan and validate: the module's functions for them.
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_report_calls(pybind11::module_& m);

}  // namespace treering::python
