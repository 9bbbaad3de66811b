// What realrun was compiled with (CUDA, NCCL, MPI) and what it can see at run time. Without the CUDA
// toolkit or NCCL the build still succeeds and these say which parts were left out.
#pragma once

#include <string>

namespace treering::realrun {

struct BuildInfo {
  bool cuda_compiled = false;
  bool nccl_compiled = false;
  bool mpi_compiled = false;
  std::string cuda_runtime_version;  // "13.0", empty when not compiled
  std::string nccl_version;          // "2.28.3", empty when not compiled
  std::string mpi_library;           // "MPI 3.1" (the standard version found at configure time), empty when not
  int cuda_devices = 0;              // devices visible now
  std::string cuda_device_status;    // "2 devices" or why none ("no CUDA driver (error 35: ...)")
};

BuildInfo build_info();

}  // namespace treering::realrun
