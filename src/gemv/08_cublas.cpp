// Rung 8, cublas: cublasSgemv (true fp32), the vendor baseline every rung is timed against.
// cuBLAS is column-major: our row-major A (m x n, row stride lda) is, as cuBLAS reads it, the
// column-major matrix A^T with n rows, m columns and leading dimension lda. So
//   Trans::N: y = A x   = (A^T)^T x -> CUBLAS_OP_T on the n x m matrix;
//   Trans::T: y = A^T x             -> CUBLAS_OP_N on the n x m matrix.
// The 32-bit API (cublasSgemv) is used whenever every element offset it can form fits an int, the
// 64-bit one (cublasSgemv_64) otherwise. Measured on an H100 with CUDA 13.0, m = 3, n = 100,
// lda = 2^30 + 4 (offsets past 2^31): CUBLAS_OP_T (our Trans::N) is right through both, but
// CUBLAS_OP_N (our Trans::T) faults with an illegal address through both, so Trans::T with offsets
// past 2^31 - 1 is reported Unsupported instead.
// Handles are per host thread and per device (core/cublas_handle.hpp).
#include "core/errors.hpp"
#include "core/cublas_handle.hpp"
#include "gemv/gemv_rung.hpp"

#include <cublas_v2.h>

#include <climits>

namespace rungs::sgemv::cublas {

void run(const Args& a) {
  cublasHandle_t h = detail::cublas_handle(a.stream);
  const cublasOperation_t op = a.trans == Trans::N ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Largest element offsets (+1) into A, x and y.
  const int64_t span_a = (a.m - 1) * a.lda + a.n;
  const int64_t span_x = (a.dot_len() - 1) * a.incx + 1, span_y = (a.out_len() - 1) * a.incy + 1;
  const bool fits32 = a.m <= INT_MAX && a.n <= INT_MAX && a.lda <= INT_MAX && span_a <= INT_MAX &&
                      span_x <= INT_MAX && span_y <= INT_MAX;
  if (!fits32 && a.trans == Trans::T)
    detail::unsupported("cublas",
                        "Trans::T with element offsets past 2^31 - 1 (cuBLAS's CUBLAS_OP_N gemv faults there)");
  if (fits32) {
    RUNGS_CUBLAS(cublasSgemv(h, op, static_cast<int>(a.n), static_cast<int>(a.m), &a.alpha, a.A,
                             static_cast<int>(a.lda), a.x, static_cast<int>(a.incx), &a.beta, a.y,
                             static_cast<int>(a.incy)));
  } else {
    RUNGS_CUBLAS(cublasSgemv_64(h, op, a.n, a.m, &a.alpha, a.A, a.lda, a.x, a.incx, &a.beta, a.y, a.incy));
  }
}

}  // namespace rungs::sgemv::cublas
