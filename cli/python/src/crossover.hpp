// treering.crossover()'s compiled half: `treering crossover`'s records (two algorithms, or --vs tp), computed by
// the analysis library as the command computes them.
#pragma once

#include <pybind11/pybind11.h>

namespace treering::python {

void add_crossover(pybind11::module_& m);

}  // namespace treering::python
