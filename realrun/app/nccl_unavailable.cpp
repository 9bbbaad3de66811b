// nccl_bench.hpp when the build had no NCCL: available() says so; timing refuses.
#include <stdexcept>

#include "nccl_bench.hpp"

namespace treering::realrun::app {

bool nccl_available(std::string& why) {
  why = "this build has no NCCL (none found when it was configured)";
  return false;
}

void close_nccl(bool) {}
void select_local_gpu(const MpiTransport&) {}  // without NCCL in the build, the cuda paths run on GPU 0

void* nccl_communicator() { throw std::runtime_error("this build has no NCCL (none found when it was configured)"); }

std::vector<double> time_nccl(BenchOp, double, int, int) {
  throw std::runtime_error("this build has no NCCL (none found when it was configured)");
}

}  // namespace treering::realrun::app
