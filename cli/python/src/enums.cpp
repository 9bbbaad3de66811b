#include "enums.hpp"

#include <string>
#include <vector>

#include "treering/model/collectives.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/model/layout.hpp"
#include "treering/model/plan.hpp"
#include "treering/model/step.hpp"
#include "treering/validate/report.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

// A member per value (Python identifiers: "tree-fused" becomes tree_fused), str() giving the library's name.
template <typename Enum, typename Names>
void add_enum(py::module_& m, const char* python_name, const char* doc, const std::vector<Enum>& values,
              const Names& names) {
  py::enum_<Enum> bound(m, python_name, doc);
  for (const Enum value : values) {
    std::string identifier = names(value);
    for (char& c : identifier) c = c == '-' ? '_' : c;
    bound.value(identifier.c_str(), value);
  }
  // Replaces py::enum_'s own __str__ ("Algorithm.tree_fused"): a def() would add an overload behind it.
  bound.attr("__str__") =
      py::cpp_function([names](Enum value) { return std::string(names(value)); }, py::is_method(bound));
}

std::vector<model::DecodeAlgorithm> every_algorithm() {
  std::vector<model::DecodeAlgorithm> out;
  for (const model::DecodeAlgorithmInfo& info : model::decode_algorithm_table()) out.push_back(info.id);
  return out;
}

}  // namespace

void add_enums(py::module_& m) {
  using model::CollectiveOp;
  add_enum(m, "Algorithm", "The decode combines (treering.algorithms(): their names, the paper's first).",
           every_algorithm(), [](model::DecodeAlgorithm a) { return model::to_string(a); });
  add_enum(m, "Engine", "model: the analytical model; sim: the replay with shared links.",
           std::vector{validate::Engine::model, validate::Engine::sim},
           [](validate::Engine e) { return validate::to_string(e); });
  add_enum(m, "Scope", "What a row times: the attention's combine, the whole layer, or the whole step.",
           std::vector{model::Scope::attention, model::Scope::layer, model::Scope::step},
           [](model::Scope s) { return model::to_string(s); });
  add_enum(m, "Placement", "How a TP x CP layout numbers its GPUs: TP groups innermost, or CP groups.",
           std::vector{model::LayoutOrder::tp_inner, model::LayoutOrder::cp_inner},
           [](model::LayoutOrder o) { return model::to_string(o); });
  add_enum(m, "Op", "The collectives collective() models.",
           std::vector{CollectiveOp::allreduce, CollectiveOp::allgather, CollectiveOp::reduce_scatter,
                       CollectiveOp::broadcast, CollectiveOp::sendrecv, CollectiveOp::alltoall},
           [](CollectiveOp op) { return model::to_string(op); });
}

}  // namespace treering::python
