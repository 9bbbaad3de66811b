// cuda_decode.hpp when the build had no CUDA toolkit or no NCCL: available() says so; the rest refuses.
#include <stdexcept>

#include "treering/realrun/cuda_decode.hpp"

namespace treering::realrun::cuda {
namespace detail {
class DeviceComm {};  // never made in such a build
}  // namespace detail
namespace {

constexpr const char* kMissing = "this build has no cuda decode (it needs the CUDA toolkit and NCCL when it is configured)";

}  // namespace

bool decode_available(std::string& why) {
  why = kMissing;
  return false;
}

struct GpuDecode::Impl {};

GpuDecode::GpuDecode(const model::DecodePlan&, int, void*, std::uint64_t, std::function<void()>, double) { throw std::runtime_error(kMissing); }
GpuDecode::GpuDecode(const model::DecodePlan&, int, std::unique_ptr<detail::DeviceComm>, std::uint64_t, double) {
  throw std::runtime_error(kMissing);
}
GpuDecode::~GpuDecode() = default;
GpuRankResult GpuDecode::run() { throw std::runtime_error(kMissing); }

GpuRankResult run_plan_on_gpu(const model::DecodePlan&, int, void*, std::uint64_t) { throw std::runtime_error(kMissing); }
LoopbackResult run_loopback(const model::DecodePlan&, std::uint64_t, int, int, double) { throw std::runtime_error(kMissing); }

}  // namespace treering::realrun::cuda
