// CPU references, callable by users: fp64 accumulation, blocked and multi-threaded.
// Host pointers, row-major, the same argument conventions as rungs::gemm.
#pragma once

#include <rungs/rungs.hpp>

#include <cstdint>

namespace rungs::reference {

// C = alpha * op(A) * op(B) + beta * C with every product and sum in double.
// C is double (m x n, row stride ldc); beta == 0 means C is not read.
// threads = 0 uses std::thread::hardware_concurrency().
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, double alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, double beta, double* C, int64_t ldc, int threads = 0);

// The seed articles' serial CPU version: one thread, i-j-k loops, float accumulation.
// Slow by design (it is the "CPU time" column of article 004); C is float.
void gemm_naive_fp32(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                     int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace rungs::reference
