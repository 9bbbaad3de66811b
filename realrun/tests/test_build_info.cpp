// build_info says what was compiled in, consistently with the configure step's findings.
#include <doctest/doctest.h>

#include "treering/realrun/build_info.hpp"

using treering::realrun::build_info;

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
