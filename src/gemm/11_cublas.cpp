// Rung 11, cublas: cublasSgemm with the handle's default math (true fp32, no TF32), the
// vendor baseline every rung is timed against (article 004's v9).
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the operands swap.
// Handles are per host thread and per device (detail/cublas_handle.hpp).
#include "detail/check.hpp"
#include "detail/cublas_handle.hpp"
#include "gemm/gemm_rung.hpp"

#include <cublas_v2.h>

#include <climits>

namespace rungs::sgemm::cublas {

using detail::unsupported;

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
