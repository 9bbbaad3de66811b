#include "treering/realrun/build_info.hpp"

#if TREERING_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if TREERING_HAVE_NCCL
#include <nccl.h>
#endif

namespace treering::realrun {
namespace {

#if TREERING_HAVE_CUDA
void probe_cuda(BuildInfo& info) {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
    info.cuda_runtime_version = std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  }
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status == cudaSuccess) {
    info.cuda_devices = devices;
    info.cuda_device_status = std::to_string(devices) + " device(s)";
  } else {
    info.cuda_device_status = "no usable device (CUDA error " + std::to_string(static_cast<int>(status)) + ": " +
                              cudaGetErrorString(status) + ")";
  }
}
#endif

}  // namespace

BuildInfo build_info() {
  BuildInfo info;
#if TREERING_HAVE_CUDA
  info.cuda_compiled = true;
  probe_cuda(info);
#else
  info.cuda_device_status = "CUDA not compiled in (toolkit not found at configure time)";
#endif
#if TREERING_HAVE_NCCL
  info.nccl_compiled = true;
  int version = 0;
  if (ncclGetVersion(&version) == ncclSuccess) {
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    info.nccl_version = std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." +
                        std::to_string(version % 100);
  }
#endif
#if TREERING_HAVE_MPI
  // Known from the configure step: the `treering` binary also links SimGrid, whose SMPI exports MPI
  // symbols, so MPI is only called from the separate realrun launcher, never from here.
  info.mpi_compiled = true;
  info.mpi_library = "MPI " TREERING_MPI_VERSION;
#endif
  return info;
}

std::string backends_line(const BuildInfo& info) {
  std::string line = "cpu (MPI)";
  if (info.cuda_compiled && info.nccl_compiled) {
    return line + ", cuda (NCCL, one GPU per rank; --loopback P: P virtual ranks on one GPU)";
  }
  if (!info.cuda_compiled) return line + "; cuda: not compiled in (CUDA toolkit not found at configure time)";
  return line + "; cuda: not compiled in (NCCL not found at configure time)";
}

}  // namespace treering::realrun
