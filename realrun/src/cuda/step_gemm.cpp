// step_gemm.hpp: descriptors made once per shape, cuBLASLt's heuristic asked once, a product a single call.
#include "step_gemm.hpp"

#include <stdexcept>
#include <string>

#include "device_memory.hpp"

namespace treering::realrun::cuda::detail {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusString(status));
  }
}

}  // namespace

LtContext::LtContext() {
  check_lt(cublasLtCreate(&handle_), "cublasLtCreate");
  try {
    check(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc (cuBLASLt workspace)");
  } catch (...) {
    cublasLtDestroy(handle_);
    throw;
  }
}

LtContext::~LtContext() {
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

LtGemm::LtGemm(const LtContext& context, int n, int k, int rows, bool accumulate)
    : context_(context), beta_(accumulate ? 1.0f : 0.0f) {
  check_lt(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transposed = CUBLAS_OP_T;
  check_lt(cublasLtMatmulDescSetAttribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed),
           "cublasLtMatmulDescSetAttribute");
  check_lt(cublasLtMatrixLayoutCreate(&a_, CUDA_R_16BF, k, n, k), "cublasLtMatrixLayoutCreate");
  check_lt(cublasLtMatrixLayoutCreate(&b_, CUDA_R_16BF, k, rows, k), "cublasLtMatrixLayoutCreate");
  check_lt(cublasLtMatrixLayoutCreate(&c_, CUDA_R_16BF, n, rows, n), "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t preference = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace_bytes = LtContext::kWorkspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes);
  const cublasStatus_t asked = status != CUBLAS_STATUS_SUCCESS
                                   ? status
                                   : cublasLtMatmulAlgoGetHeuristic(context.handle(), operation_, a_, b_, c_, c_,
                                                                    preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (asked != CUBLAS_STATUS_SUCCESS || found < 1) {
    release();
    throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(rows) + " x " + std::to_string(k) +
                             " by " + std::to_string(k) + " x " + std::to_string(n) + " bf16 product");
  }
  algorithm_ = result.algo;
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (operation_) cublasLtMatmulDescDestroy(operation_);
  c_ = b_ = a_ = nullptr;
  operation_ = nullptr;
}

void LtGemm::run(const std::uint16_t* weight, const std::uint16_t* x, std::uint16_t* y, cudaStream_t stream) const {
  const float alpha = 1.0f;
  check_lt(cublasLtMatmul(context_.handle(), operation_, &alpha, weight, a_, x, b_, &beta_, y, c_, y, c_, &algorithm_,
                          context_.workspace(), LtContext::kWorkspaceBytes, stream),
           "cublasLtMatmul");
}

}  // namespace treering::realrun::cuda::detail
