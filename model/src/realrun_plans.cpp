#include "treering/model/realrun_plans.hpp"
#include "treering/topologies/input_error.hpp"

#include <stdexcept>

namespace treering::model {

RealrunBackend parse_realrun_backend(const std::string& name) {
  if (name == "cpu") return RealrunBackend::cpu;
  if (name == "cuda") return RealrunBackend::cuda;
  if (name == "cuda-loopback") return RealrunBackend::cuda_loopback;
  throw topologies::InputError("unknown backend '" + name + "' (cpu, cuda or cuda-loopback)");
}

const char* to_string(RealrunBackend backend) {
  switch (backend) {
    case RealrunBackend::cpu: return "cpu";
    case RealrunBackend::cuda: return "cuda";
    case RealrunBackend::cuda_loopback: return "cuda-loopback";
  }
  return "?";
}

PlanOptions realrun_plan_options(RealrunBackend backend) {
  PlanOptions options;
  options.partial_o_bytes = 4;
  // NCCL picks its own algorithm and protocol per call: the plan takes the model's prediction of that pick (the
  // fastest of NCCL's candidates). The cpu backend's and the loopback's collectives are rings of their own.
  if (backend != RealrunBackend::cuda) options.collective_algorithm = CollectiveAlgorithm::ring;
  // A ring round's copy runs beside its attention on cuda; on a CPU host the cores that attend also copy, and in the
  // loopback the copies and kernels of all virtual ranks share one GPU's memory: there a round takes both.
  options.ring_overlap = backend == RealrunBackend::cuda;
  return options;
}

}  // namespace treering::model
