// The plans treering-realrun's backends execute, as model options: the model and the simulator predict what the
// real run does, and validate joins its measurements with predictions without depending on realrun itself.
#pragma once

#include <string>

#include "treering/model/plan.hpp"

namespace treering::model {

enum class RealrunBackend { cpu, cuda };
RealrunBackend parse_realrun_backend(const std::string& name);  // "cpu" | "cuda"; throws std::invalid_argument

// Partial outputs travel in fp32 and every collective is a ring (the backends' own rings). The cpu backend's ring
// does not overlap: the cores that attend also copy the blocks (MPI's shared-memory transfers move only inside MPI
// calls), so a round takes attention plus transfer. The cuda backend's copies run beside the kernel.
PlanOptions realrun_plan_options(RealrunBackend backend);

}  // namespace treering::model
