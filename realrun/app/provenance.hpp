// Where a measurement comes from: host, time (UTC), commit, command line, backend, ranks, and the MPI, CUDA and
// NCCL versions (GPU name and driver: null on the cpu backend).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "treering/model/realrun_plans.hpp"

namespace treering::realrun::app {

nlohmann::ordered_json provenance(const std::vector<std::string>& argv, model::RealrunBackend backend,
                                  const MpiTransport& transport);

}  // namespace treering::realrun::app
