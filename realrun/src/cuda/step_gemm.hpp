// The step's matrix products through cuBLASLt: y[rows][n] (+)= x[rows][k] W^T with W [n][k] row-major (a linear
// layer's weight as PyTorch and Hugging Face store it), bf16 operands, fp32 accumulation. In cuBLAS's column-major
// terms that is D (n x rows) = op(A) B with A = W read transposed (k x n, leading dimension k), B = x (k x rows):
// the "TN" product that cuBLASLt's tensor-core kernels take. `accumulate` adds into y (beta 1: the residual add of
// the output and down projections). The algorithm is cuBLASLt's first heuristic choice for the shape, asked once;
// a product then launches with no host query, so it can be captured in a CUDA graph. Private to realrun.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace treering::realrun::cuda::detail {

class LtContext {  // the handle and the workspace every product shares (products on one stream at a time)
 public:
  LtContext();
  ~LtContext();
  LtContext(const LtContext&) = delete;
  LtContext& operator=(const LtContext&) = delete;
  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_; }
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;

 private:
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

class LtGemm {
 public:
  LtGemm(const LtContext& context, int n, int k, int rows, bool accumulate);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  void run(const std::uint16_t* weight, const std::uint16_t* x, std::uint16_t* y, cudaStream_t stream) const;

 private:
  void release();
  const LtContext& context_;
  float beta_ = 0;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algorithm_{};
};

}  // namespace treering::realrun::cuda::detail
