// Verification of reduce_sum results against an exact CPU reference, shared by the tests and
// `rungs verify` / `rungs bench` (one definition of "correct" for the whole project).
#pragma once

#include <rungs/rungs.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rungs::check {

enum class ReducePattern {
  // i32: uniform over the whole int32 range; i64: uniform over the whole int64 range (the sum
  // wraps); f32/f64: uniform in [-1, 1] with |x| >= 2^-8.
  random,
  // 0, 1, ..., n-1 (article 002's workload); f32/f64 hold the same integers converted.
  article,
  // Small integers in [-8, 8]: every partial sum of < 2^21 elements is an integer below 2^24
  // in magnitude, exact in f32, so any summation order gives the exact sum (f64: < 2^50).
  integers,
  // Heavy cancellation: even positions hold pairs +v, -v (v = 2^k (1 + r), k in [0, 24] for f32,
  // [0, 53] for f64) whose partners sit at random even positions, odd positions small values as
  // in `random` (ints: pairs up to 2^30 / 2^62 and [-8, 8]). sum|x| ~ 2^20 n (f32) / 2^48 n (f64)
  // while |sum| ~ sqrt(n): a plain sum in the input type fails the accurate bound, a double
  // (f32 data) or compensated (f64 data) sum meets it.
  cancellation,
};

// "i32", "i64", "f32", "f64"; the bytes of one element of that type.
const char* dtype_name(DType d);
size_t dtype_bytes(DType d);

struct ReduceData {
  DType dtype = DType::f32;
  int64_t n = 0;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<float> f32;
  std::vector<double> f64;
  const void* data() const;  // the vector of `dtype`
  size_t bytes() const;      // n * element size
};
ReduceData make_reduce_data(DType dtype, int64_t n, uint64_t seed, ReducePattern p = ReducePattern::random);

// The exact sum. Ints: isum (i64 wraps modulo 2^64). Floats: the exact sum of the finite
// elements (an exact fixed-point accumulator) as the unevaluated double-double hi + lo with
// |hi + lo - sum| <= 2^-104 |sum|; abs_sum = sum |x| (double); the special values seen.
struct ReduceExact {
  int64_t isum = 0;
  double hi = 0, lo = 0;
  double abs_sum = 0;
  bool has_nan = false, pos_inf = false, neg_inf = false;
};
ReduceExact reduce_reference(const ReduceData& d);  // multithreaded for n >= 2^22

struct ReduceErrors {
  double abs_err = 0;      // |result - exact|
  double rel_err = 0;      // abs_err / |exact| (0 when exact is 0 and the result is too)
  double bound = 0;        // reduce_tolerance
  double bound_ratio = 0;  // abs_err / bound (+Inf when the bound is 0 and the result is off)
  bool pass = false;
  std::string reason;      // why it failed (empty when it passed)
};

// result: one int64_t (i32/i64 input), float (f32) or double (f64), as copied back.
// Ints: exact equality. Floats: NaN anywhere -> NaN; +Inf -> +Inf unless -Inf too (-> NaN);
// -Inf likewise; otherwise a finite result within reduce_tolerance of the exact sum:
//  * accurate: 1 ulp(exact rounded to the type) + 2^-40 sum|x| (f32) / 2^-69 sum|x| (f64);
//  * plain (sums in the input type, any order): (n - 1) u sum|x| + 1 ulp, u = 2^-24 / 2^-53.
ReduceErrors compare_reduce(const ReduceData& d, const ReduceExact& e, const void* result, bool accurate);
double reduce_tolerance(const ReduceData& d, const ReduceExact& e, bool accurate);

}  // namespace rungs::check
