// cuda_decode.hpp when the build had no CUDA toolkit or no NCCL: decode_available() says so; the rest refuses.
#include <stdexcept>

#include "treering/realrun/cuda_decode.hpp"

namespace treering::realrun::cuda {
namespace {

constexpr const char* kMissing =
    "this build has no cuda decode (it needs the CUDA toolkit and NCCL when it is configured)";

}  // namespace

bool decode_available(std::string& why) {
  why = kMissing;
  return false;
}

GpuMeasurement measure_on_gpu(const model::DecodePlan&, int, void*, std::uint64_t, const GpuTiming&,
                              const std::function<void()>&, const std::function<double(double)>&) {
  throw std::runtime_error(kMissing);
}
GpuMeasurement measure_loopback(const model::DecodePlan&, std::uint64_t, const GpuTiming&) {
  throw std::runtime_error(kMissing);
}
std::vector<double> time_loopback_collective(BenchOp, double, int, int, int) { throw std::runtime_error(kMissing); }

}  // namespace treering::realrun::cuda
