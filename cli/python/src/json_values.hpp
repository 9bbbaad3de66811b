// A report the command writes as JSON, handed to Python as the same values.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace treering::python {

// json.loads of the same text: dicts, lists, floats; an unbounded band is None, as in the command's JSON.
pybind11::object from_json(const nlohmann::ordered_json& json);

}  // namespace treering::python
