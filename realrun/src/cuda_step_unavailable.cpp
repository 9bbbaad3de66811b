// step_run.hpp's cuda::measure_step when the build has no CUDA toolkit: it refuses.
#include <stdexcept>

#include "treering/realrun/step_run.hpp"

namespace treering::realrun::cuda {

StepOutputs run_step_once(const StepShape&, std::uint64_t) {
  throw std::runtime_error(
      "this build has no CUDA backend (no CUDA toolkit when it was configured): the step runs on a GPU only");
}

StepMeasurement measure_step(const StepShape&, int, int, std::uint64_t) {
  throw std::runtime_error(
      "this build has no CUDA backend (no CUDA toolkit when it was configured): the step runs on a GPU only");
}

}  // namespace treering::realrun::cuda
