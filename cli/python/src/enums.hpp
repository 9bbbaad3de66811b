// The libraries' enums as Python enums (py::enum_): treering.Algorithm, Engine, Scope, Placement, Op. Every call
// takes a member or its name ("tree-fused"); str(member) is the name the command and the records use.
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_enums(pybind11::module_& m);

}  // namespace treering::python
