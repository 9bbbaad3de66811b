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

// The decode backends a build runs, for `treering-realrun info`: "cpu (MPI)" always; the cuda backend's two ways
// when CUDA and NCCL were compiled in (NCCL with one GPU per rank, or --loopback P: P virtual ranks on one GPU),
// or why it is missing. Example: CUDA without NCCL -> "cpu (MPI); cuda: not compiled in (NCCL not found)".
std::string backends_line(const BuildInfo& info);

}  // namespace treering::realrun
