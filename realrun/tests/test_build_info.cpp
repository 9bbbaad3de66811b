// build_info says what was compiled in, consistently with the configure step's findings.
#include <doctest/doctest.h>

#include "treering/realrun/build_info.hpp"

using treering::realrun::build_info;
using treering::realrun::backends_line;

TEST_CASE("compiled-in parts match the configure step") {
  auto info = build_info();
  CHECK(info.cuda_compiled == static_cast<bool>(TREERING_HAVE_CUDA));
  CHECK(info.nccl_compiled == static_cast<bool>(TREERING_HAVE_NCCL));
  CHECK(info.mpi_compiled == static_cast<bool>(TREERING_HAVE_MPI));
  CHECK_FALSE(info.cuda_device_status.empty());
  if (info.nccl_compiled) {
    // ncclGetVersion works without a GPU; NCCL 2.x.
    CHECK(info.nccl_version.rfind("2.", 0) == 0);
  }
  if (info.cuda_compiled && info.cuda_devices == 0) {
    MESSAGE("no GPU here: " << info.cuda_device_status);
  }
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
  CHECK(backends_line(treering::realrun::BuildInfo{}) == "cpu (MPI); cuda: not compiled in (CUDA toolkit not found at configure time)");
}
