// Rung 11, cublas: cublasSgemm with the handle's default math (true fp32, no TF32), the
// vendor baseline every rung is timed against (article 004's v9). For the tensor-core ladder,
// cublasGemmEx with the matching type and compute mode: CUBLAS_COMPUTE_32F for f16 and bf16
// (fp32 accumulation, fp32 alpha/beta), CUBLAS_COMPUTE_32F_FAST_TF32 for float with Math::tf32.
// cuBLAS has no 3xTF32 mode for fp32 data, so tf32x3 is Unsupported here.
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the operands swap.
// Handles are per host thread and per device (core/cublas_handle.hpp).
#include "core/errors.hpp"
#include "core/cublas_handle.hpp"
#include "gemm/gemm_rung.hpp"

#include <cublas_v2.h>

#include <climits>

namespace rungs::sgemm::cublas {

using detail::unsupported;

namespace {
template <typename T>
void gemm_ex(const ArgsT<T>& a, cudaDataType_t type, cublasComputeType_t compute) {
  if (a.lda > INT_MAX || a.ldb > INT_MAX || a.ldc > INT_MAX) unsupported("cublas", "cuBLAS takes 32-bit leading dimensions");
  cublasHandle_t h = detail::cublas_handle(a.stream);
  const cublasOperation_t opa = a.ta == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = a.tb == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  RUNGS_CUBLAS(cublasGemmEx(h, opb, opa, static_cast<int>(a.n), static_cast<int>(a.m), static_cast<int>(a.k),
                            &a.alpha, a.B, type, static_cast<int>(a.ldb), a.A, type, static_cast<int>(a.lda), &a.beta,
                            a.C, type, static_cast<int>(a.ldc), compute, CUBLAS_GEMM_DEFAULT));
}
}  // namespace

void run_tf32(const Args& a) { gemm_ex(a, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32); }
void run_f16(const ArgsH& a) { gemm_ex(a, CUDA_R_16F, CUBLAS_COMPUTE_32F); }
void run_bf16(const ArgsBF& a) { gemm_ex(a, CUDA_R_16BF, CUBLAS_COMPUTE_32F); }

void run(const Args& a) {
  if (a.lda > INT_MAX || a.ldb > INT_MAX || a.ldc > INT_MAX) unsupported("cublas", "cuBLAS takes 32-bit leading dimensions");
  cublasHandle_t h = detail::cublas_handle(a.stream);
  const cublasOperation_t opa = a.ta == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = a.tb == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  RUNGS_CUBLAS(cublasSgemm(h, opb, opa, static_cast<int>(a.n), static_cast<int>(a.m), static_cast<int>(a.k), &a.alpha,
                           a.B, static_cast<int>(a.ldb), a.A, static_cast<int>(a.lda), &a.beta, a.C,
                           static_cast<int>(a.ldc)));
}

}  // namespace rungs::sgemm::cublas
