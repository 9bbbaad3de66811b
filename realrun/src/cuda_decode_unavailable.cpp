// cuda_decode.hpp when the build had no CUDA toolkit or no NCCL: available() says so; run refuses.
#include <stdexcept>

#include "treering/realrun/cuda_decode.hpp"

namespace treering::realrun::cuda {

bool decode_available(std::string& why) {
  why = "this build has no cuda decode (it needs the CUDA toolkit and NCCL when it is configured)";
  return false;
}

struct GpuDecode::Impl {};

GpuDecode::GpuDecode(const model::DecodePlan&, int, void*, std::uint64_t) {
  throw std::runtime_error("this build has no cuda decode (it needs the CUDA toolkit and NCCL when it is configured)");
}
GpuDecode::~GpuDecode() = default;
GpuRankResult GpuDecode::run() { return {}; }  // never reached: the constructor refuses

GpuRankResult run_plan_on_gpu(const model::DecodePlan& plan, int rank, void* nccl_comm, std::uint64_t seed) {
  return GpuDecode(plan, rank, nccl_comm, seed).run();
}

}  // namespace treering::realrun::cuda
