// build_info says what was compiled in, consistently with the configure step's findings.
#include <doctest/doctest.h>

#include <algorithm>

#include "treering/realrun/build_info.hpp"

using treering::realrun::backends_line;
using treering::realrun::build_info;

TEST_CASE("each compiled-in part answers its own query; each left-out part says so") {
  // Not the configure macros against themselves: what each part reports when asked at run time.
  const auto info = build_info();
  if (info.cuda_compiled) {
    // The runtime answered: its version ("13.0": major.minor) and a device count or the runtime's reason for none.
    CHECK(info.cuda_runtime_version.find('.') != std::string::npos);
    const bool counted = info.cuda_device_status.find("device(s)") != std::string::npos;
    CHECK((counted ? info.cuda_devices > 0 : info.cuda_device_status.rfind("no usable device (CUDA error ", 0) == 0));
  } else {
    CHECK(info.cuda_runtime_version.empty());
    CHECK(info.cuda_devices == 0);
    CHECK(info.cuda_device_status == "CUDA not compiled in (toolkit not found at configure time)");
  }
  if (info.nccl_compiled) {
    // ncclGetVersion works without a GPU: NCCL 2.x.y.
    CHECK(info.nccl_version.rfind("2.", 0) == 0);
    CHECK(std::count(info.nccl_version.begin(), info.nccl_version.end(), '.') == 2);
  } else {
    CHECK(info.nccl_version.empty());
  }
  CHECK(info.mpi_compiled == !info.mpi_library.empty());
}

TEST_CASE("info's backends line names the cuda backend when it is built, and why not when it is not") {
  treering::realrun::BuildInfo built;
  built.cuda_compiled = built.nccl_compiled = true;
  const std::string line = backends_line(built);
  CHECK(line.find("cuda (NCCL, one GPU per rank") != std::string::npos);
  CHECK(line.find("--loopback") != std::string::npos);
  CHECK(line.find("not built") == std::string::npos);  // the stale "cuda (not built yet)" of issue 17
  treering::realrun::BuildInfo no_nccl;
  no_nccl.cuda_compiled = true;
  CHECK(backends_line(no_nccl) == "cpu (MPI); cuda: not compiled in (NCCL not found at configure time)");
  CHECK(backends_line(treering::realrun::BuildInfo{}) ==
        "cpu (MPI); cuda: not compiled in (CUDA toolkit not found at configure time)");
}
