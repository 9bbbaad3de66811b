// The plans treering-realrun's backends execute, as model options: the model and the simulator predict what the
// real run does, and validate joins its measurements with predictions without depending on realrun itself.
#pragma once

#include <string>

#include "treering/model/plan.hpp"

namespace treering::model {

// cpu: MPI ranks on host cores; cuda: one GPU per rank, NCCL between them; cuda-loopback: P virtual ranks as
// streams on one GPU, device copies between them (treering-realrun decode --loopback P).
enum class RealrunBackend { cpu, cuda, cuda_loopback };
// "cpu" | "cuda" | "cuda-loopback"; throws std::invalid_argument.
RealrunBackend parse_realrun_backend(const std::string& name);
const char* to_string(RealrunBackend backend);

// Partial outputs travel in fp32. The cpu backend's and the loopback's collectives are their own rings; NCCL's
// (cuda) are whatever the model predicts NCCL picks per call (the fastest of its algorithms and protocols). The cpu
// backend's ring does not overlap: the cores that attend also copy the blocks (MPI's shared-memory transfers move
// only inside MPI calls), so a round takes attention plus transfer; nor does the loopback's, whose copies and
// kernels share one GPU's memory. On cuda (one GPU a rank) the copies run beside the kernel.
PlanOptions realrun_plan_options(RealrunBackend backend);

}  // namespace treering::model
