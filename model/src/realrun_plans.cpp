#include "treering/model/realrun_plans.hpp"

#include <stdexcept>

namespace treering::model {

RealrunBackend parse_realrun_backend(const std::string& name) {
  if (name == "cpu") return RealrunBackend::cpu;
  if (name == "cuda") return RealrunBackend::cuda;
  throw std::invalid_argument("unknown backend '" + name + "' (cpu or cuda)");
}

PlanOptions realrun_plan_options(RealrunBackend backend) {
  PlanOptions options;
  options.partial_o_bytes = 4;
  options.collective_algorithm = CollectiveAlgorithm::ring;
  options.ring_overlap = backend == RealrunBackend::cuda;
  return options;
}

}  // namespace treering::model
