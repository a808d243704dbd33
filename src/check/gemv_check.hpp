// Verification of gemv results against the fp64 CPU reference, shared by the tests and
// `rungs verify` / `rungs bench` (one definition of "correct" for the whole project).
// The error measures and tolerances are gemm's (gemm_check.hpp) with k = the dot length.
#pragma once

#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::check {

// y = alpha * op(A) x + beta * y; A stored row-major, m rows of n columns, row stride lda.
struct GemvShape {
  Trans trans = Trans::N;
  int64_t m = 0, n = 0;
  int64_t lda = 0;  // 0 = tight (n)
  int64_t incx = 1, incy = 1;
  float alpha = 1.0f, beta = 0.0f;
};

GemvShape normalized(GemvShape s);          // lda filled in (max(1, n) when 0)
int64_t gemv_out_len(const GemvShape& s);   // elements of y: m for N, n for T
int64_t gemv_dot_len(const GemvShape& s);   // elements of x: n for N, m for T
int64_t gemv_a_elems(const GemvShape& s);   // stored A incl. padding: (m-1)*lda + n (0 if empty)
int64_t gemv_x_elems(const GemvShape& s);   // (dot_len-1)*incx + 1 (0 if empty)
int64_t gemv_y_elems(const GemvShape& s);   // (out_len-1)*incy + 1 (0 if empty)

// Host copies of the inputs in their stored layouts. Values have |v| uniform in [2^-8, 1] with
// a random sign (counter-based RNG from the seed, like make_gemm_data); the padding of A
// (columns n..lda-1) and the stride gaps of x and y0 hold NaN, so a rung that reads them
// poisons its output.
struct GemvData {
  std::vector<float> A, x, y0;
};
GemvData make_gemv_data(const GemvShape& s, uint64_t seed);

// out_len values each: ref = alpha op(A) x + beta y0 in fp64 (beta == 0: y0 is not read;
// alpha == 0 or dot_len == 0: A and x are not read), mag = |alpha| |op(A)| |x| + |beta| |y0|.
// Multithreaded over the outputs (std::thread, hardware_concurrency) for big shapes.
struct GemvReference {
  std::vector<double> ref, mag;
};
GemvReference gemv_reference(const GemvShape& s, const GemvData& d);

// y_stored: gemv_y_elems floats as copied back after the call; y0_stored: the y the run
// started from (its stride gaps must be unchanged, bitwise or NaN for NaN; nullptr skips
// that check). Element-wise |y - ref| <= elementwise_gamma(dot_len) * mag and normwise
// ||y - ref|| / ||ref|| <= normwise_tolerance(dot_len), as for gemm with k = dot_len.
GemmErrors compare_gemv(const GemvShape& s, const GemvReference& r, const float* y_stored, const float* y0_stored);

}  // namespace rungs::check
