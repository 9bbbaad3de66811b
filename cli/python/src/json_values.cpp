#include "json_values.hpp"

namespace treering::python {

pybind11::object from_json(const nlohmann::ordered_json& json) {
  return pybind11::module_::import("json").attr("loads")(json.dump());
}

}  // namespace treering::python
