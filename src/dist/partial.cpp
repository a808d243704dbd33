// The partial products of the reduce-scatter rungs: cuBLAS with 16-bit inputs and fp32
// accumulation, written as fp32 (rungs 1 to 3) or rounded to bf16 (rung 5), several row blocks in
// one strided-batched call; and rung 4's all-gather products, the rows of several ranks in one
// strided-batched call with alpha and beta.
#include "dist/dist_rung.hpp"

#include "core/cublas_handle.hpp"

#include <cublas_v2.h>

#include <climits>
#include <type_traits>

namespace rungs::dist::detail {

namespace {

template <typename T, typename P_t>
void partial(const char* rung, int64_t rows, int64_t n, int64_t k, const T* A, int64_t lda, int64_t strideA,
             const T* B, int64_t ldb, bool accumulate, P_t* P, int64_t ldp, int64_t strideP, int batch,
             cudaStream_t stream, cudaDataType_t type) {
  const cudaDataType_t p_type = std::is_same_v<P_t, float> ? CUDA_R_32F : CUDA_R_16BF;
  if (rows == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    if (accumulate) return;
    for (int b = 0; b < batch; ++b)
      RUNGS_CUDA(cudaMemset2DAsync(P + b * strideP, static_cast<size_t>(ldp) * sizeof(P_t), 0,
                                   static_cast<size_t>(n) * sizeof(P_t), static_cast<size_t>(rows), stream));
    return;
  }
  if (rows > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldp > INT_MAX)
    rungs::detail::unsupported(rung, "cuBLAS takes 32-bit sizes and leading dimensions");
  // Row-major P = A B is column-major P^T = B^T A^T: the operands swap.
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  cublasHandle_t h = rungs::detail::cublas_handle(stream);
  if (batch == 1) {
    RUNGS_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows),
                              static_cast<int>(k), &one, B, type, static_cast<int>(ldb), A, type,
                              static_cast<int>(lda), &beta, P, p_type, static_cast<int>(ldp), CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  } else {
    RUNGS_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows),
                                            static_cast<int>(k), &one, B, type, static_cast<int>(ldb), 0, A, type,
                                            static_cast<int>(lda), strideA, &beta, P, p_type,
                                            static_cast<int>(ldp), strideP, batch, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
  }
}

template <typename T>
void batched(int64_t rows, int64_t n, int64_t k, float alpha, const T* A, int64_t lda, int64_t strideA, const T* B,
             int64_t ldb, float beta, T* C, int64_t ldc, int64_t strideC, int batch, cudaStream_t stream,
             cudaDataType_t type) {
  if (rows == 0 || n == 0 || batch == 0) return;
  if (rows > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
    rungs::detail::unsupported("copy_engine", "cuBLAS takes 32-bit sizes and leading dimensions");
  // Row-major C = A B is column-major C^T = B^T A^T; k = 0 leaves beta * C (cuBLAS reads C only
  // when beta != 0).
  cublasHandle_t h = rungs::detail::cublas_handle(stream);
  RUNGS_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows),
                                          static_cast<int>(k), &alpha, B, type, static_cast<int>(ldb), 0, A, type,
                                          static_cast<int>(lda), strideA, &beta, C, type, static_cast<int>(ldc),
                                          strideC, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void batched_product(int64_t rows, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
                     int64_t strideA, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
                     int64_t strideC, int batch, cudaStream_t stream) {
  batched(rows, n, k, alpha, A, lda, strideA, B, ldb, beta, C, ldc, strideC, batch, stream, CUDA_R_16BF);
}
void batched_product(int64_t rows, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda, int64_t strideA,
                     const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, int64_t strideC, int batch,
                     cudaStream_t stream) {
  batched(rows, n, k, alpha, A, lda, strideA, B, ldb, beta, C, ldc, strideC, batch, stream, CUDA_R_16F);
}

void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __nv_bfloat16* A, int64_t lda,
                  int64_t strideA, const __nv_bfloat16* B, int64_t ldb, bool accumulate, float* P, int64_t ldp,
                  int64_t strideP, int batch, cudaStream_t stream) {
  partial(rung, rows, n, k, A, lda, strideA, B, ldb, accumulate, P, ldp, strideP, batch, stream, CUDA_R_16BF);
}
void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __half* A, int64_t lda, int64_t strideA,
                  const __half* B, int64_t ldb, bool accumulate, float* P, int64_t ldp, int64_t strideP, int batch,
                  cudaStream_t stream) {
  partial(rung, rows, n, k, A, lda, strideA, B, ldb, accumulate, P, ldp, strideP, batch, stream, CUDA_R_16F);
}

void partial_gemm(const char* rung, int64_t rows, int64_t n, int64_t k, const __nv_bfloat16* A, int64_t lda,
                  int64_t strideA, const __nv_bfloat16* B, int64_t ldb, __nv_bfloat16* P, int64_t ldp, int64_t strideP,
                  int batch, cudaStream_t stream) {
  partial(rung, rows, n, k, A, lda, strideA, B, ldb, false, P, ldp, strideP, batch, stream, CUDA_R_16BF);
}

}  // namespace rungs::dist::detail
