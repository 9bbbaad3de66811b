// cuda_attention.hpp when the build had no CUDA toolkit: available() says so; the rest refuses.
#include <stdexcept>

#include "treering/realrun/cuda_attention.hpp"

namespace treering::realrun::cuda {
namespace {

[[noreturn]] void refuse() {
  throw std::runtime_error("this build has no CUDA backend (no CUDA toolkit when it was configured)");
}

}  // namespace

bool available(std::string& why) {
  why = "this build has no CUDA backend (no CUDA toolkit when it was configured)";
  return false;
}
std::string device_name() { return ""; }

struct SplitKvAttention::Impl {};
SplitKvAttention::SplitKvAttention() { refuse(); }
SplitKvAttention::~SplitKvAttention() = default;
void SplitKvAttention::run(const AttentionShape&, Dtype, const std::uint16_t*, const std::uint16_t*,
                           const std::uint16_t*, long long, float*, float*, int, void*) {
  refuse();
}
int SplitKvAttention::chunks_for(const AttentionShape&, Dtype, long long) const { refuse(); }
void partial_attention(const AttentionShape&, Dtype, const std::uint16_t*, const std::uint16_t*, const std::uint16_t*,
                       long long, float*, float*, int, void*) {
  refuse();
}
void partial_attention_from_host(const AttentionShape&, Dtype, const std::vector<std::uint16_t>&,
                                 const std::vector<std::uint16_t>&, const std::vector<std::uint16_t>&, long long,
                                 std::vector<float>&, std::vector<float>&, int, int) {
  refuse();
}
std::vector<double> time_copy(double, int, int) { refuse(); }
std::vector<double> time_attention(const AttentionShape&, Dtype, long long, int, int) { refuse(); }

}  // namespace treering::realrun::cuda
