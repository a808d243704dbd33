// The gemv and reduce verification modules (src/check/gemv_check, reduce_check) against plain
// loops, and their tolerances against simulated faults and simulated plain/accurate sums
// (no GPU needed: runs in CI).
#include "check/gemv_check.hpp"
#include "check/reduce_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rungs::test {
namespace {

// ---------------------------------------------------------------------------------- gemv

long double slow_gemv(check::GemvShape s, const check::GemvData& d, int64_t i, long double* mag) {
  s = check::normalized(s);
  long double acc = 0, m = 0;
  const int64_t k = check::gemv_dot_len(s);
  for (int64_t p = 0; p < k; ++p) {
    const float a = s.trans == Trans::N ? d.A[i * s.lda + p] : d.A[p * s.lda + i];
    const float x = d.x[p * s.incx];
    acc += static_cast<long double>(a) * x;
    m += std::fabs(static_cast<long double>(a) * x);
  }
  const long double y0 = s.beta == 0 ? 0.0L : static_cast<long double>(d.y0[i * s.incy]);
  *mag = std::fabs(static_cast<long double>(s.alpha)) * m + std::fabs(static_cast<long double>(s.beta) * y0);
  return s.alpha * acc + s.beta * y0;
}

// A plain fp32 gemv: sequential dot products with fmaf, like the naive rung.
std::vector<float> fp32_gemv(check::GemvShape s, const check::GemvData& d, int drop_last = 0, bool tf32 = false) {
  s = check::normalized(s);
  std::vector<float> y(d.y0.empty() ? 0 : d.y0.size());
  std::copy(d.y0.begin(), d.y0.end(), y.begin());
  auto round_tf32 = [](float v) {  // keep 10 mantissa bits, round to nearest
    uint32_t b;
    std::memcpy(&b, &v, 4);
    b = (b + 0x1000u) & ~0x1FFFu;
    std::memcpy(&v, &b, 4);
    return v;
  };
  const int64_t k = check::gemv_dot_len(s);
  for (int64_t i = 0; i < check::gemv_out_len(s); ++i) {
    float acc = 0;
    for (int64_t p = 0; p < k - drop_last; ++p) {
      float a = s.trans == Trans::N ? d.A[i * s.lda + p] : d.A[p * s.lda + i], x = d.x[p * s.incx];
      if (tf32) a = round_tf32(a), x = round_tf32(x);
      acc = std::fmaf(a, x, acc);
    }
    y[i * s.incy] = s.alpha * acc + (s.beta == 0 ? 0.0f : s.beta * d.y0[i * s.incy]);
  }
  return y;
}

TEST(GemvCheck, ShapeHelpers) {
  check::GemvShape s;
  s.m = 5, s.n = 7;
  EXPECT_EQ(check::normalized(s).lda, 7);
  EXPECT_EQ(check::gemv_out_len(s), 5);
  EXPECT_EQ(check::gemv_dot_len(s), 7);
  EXPECT_EQ(check::gemv_a_elems(s), 35);
  s.trans = Trans::T, s.lda = 10, s.incx = 3, s.incy = 2;
  EXPECT_EQ(check::gemv_out_len(s), 7);
  EXPECT_EQ(check::gemv_dot_len(s), 5);
  EXPECT_EQ(check::gemv_a_elems(s), 4 * 10 + 7);
  EXPECT_EQ(check::gemv_x_elems(s), 4 * 3 + 1);
  EXPECT_EQ(check::gemv_y_elems(s), 6 * 2 + 1);
  check::GemvShape e;  // Trans::N, n = 0: an empty product with a y of m elements
  e.m = 4, e.n = 0;
  EXPECT_EQ(check::normalized(e).lda, 1);
  EXPECT_EQ(check::gemv_a_elems(e), 0);
  EXPECT_EQ(check::gemv_x_elems(e), 0);
  EXPECT_EQ(check::gemv_y_elems(e), 4);
}

TEST(GemvCheck, DataHasNaNInPaddingAndGapsAndIsSeeded) {
  check::GemvShape s;
  s.m = 9, s.n = 11, s.lda = 14, s.incx = 3, s.incy = 2;
  const check::GemvData d = check::make_gemv_data(s, 5);
  ASSERT_EQ(static_cast<int64_t>(d.A.size()), 8 * 14 + 11);
  ASSERT_EQ(static_cast<int64_t>(d.x.size()), 10 * 3 + 1);
  ASSERT_EQ(static_cast<int64_t>(d.y0.size()), 8 * 2 + 1);
  int neg = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.lda && i * s.lda + j < static_cast<int64_t>(d.A.size()); ++j) {
      const float v = d.A[i * s.lda + j];
      if (j >= s.n) {
        EXPECT_TRUE(std::isnan(v)) << i << "," << j;
      } else {
        EXPECT_GE(std::fabs(v), 1.0f / 256) << i << "," << j;
        EXPECT_LE(std::fabs(v), 1.0f);
        neg += v < 0;
      }
    }
  EXPECT_GT(neg, 20);
  EXPECT_LT(neg, 80);
  for (size_t p = 0; p < d.x.size(); ++p) EXPECT_EQ(std::isnan(d.x[p]), p % 3 != 0) << p;
  for (size_t p = 0; p < d.y0.size(); ++p) EXPECT_EQ(std::isnan(d.y0[p]), p % 2 != 0) << p;
  const check::GemvData same = check::make_gemv_data(s, 5), other = check::make_gemv_data(s, 6);
  EXPECT_EQ(0, std::memcmp(d.A.data(), same.A.data(), d.A.size() * 4));
  EXPECT_NE(d.A[0], other.A[0]);
  EXPECT_NE(d.x[0], other.x[0]);
}

TEST(GemvCheck, ReferenceMatchesAPlainLoop) {
  // Small cases, and shapes large enough for each multithreaded path (rows for N; column
  // stretches and row stretches with partials for T).
  const int64_t shapes[][2] = {{37, 29}, {1, 1}, {1, 50}, {50, 1}, {1200, 700}, {300, 5000}, {30000, 9}};
  uint64_t seed = 10;
  for (Trans t : {Trans::N, Trans::T})
    for (const auto& sh : shapes) {
      check::GemvShape s;
      s.trans = t, s.m = sh[0], s.n = sh[1], s.alpha = -1.25f, s.beta = 0.5f, s.incx = 2, s.incy = 3;
      s = check::normalized(s);
      s.lda += 3;
      const check::GemvData d = check::make_gemv_data(s, ++seed);
      const check::GemvReference r = check::gemv_reference(s, d);
      const int64_t out = check::gemv_out_len(s);
      ASSERT_EQ(static_cast<int64_t>(r.ref.size()), out);
      const int64_t step = std::max<int64_t>(1, out / 200);  // a sample of the large ones
      for (int64_t i = 0; i < out; i += step) {
        long double mag;
        const long double want = slow_gemv(s, d, i, &mag);
        ASSERT_NEAR(r.ref[i], static_cast<double>(want), 1e-13 * static_cast<double>(mag) + 1e-300)
            << sh[0] << "x" << sh[1] << " row " << i;
        ASSERT_NEAR(r.mag[i], static_cast<double>(mag), 1e-13 * static_cast<double>(mag)) << i;
      }
    }
}

TEST(GemvCheck, AlphaZeroAndEmptyDotReadNeitherANorX) {
  for (Trans t : {Trans::N, Trans::T})
    for (float beta : {0.0f, -3.0f}) {
      check::GemvShape s;
      s.trans = t, s.m = 6, s.n = 5, s.alpha = 0.0f, s.beta = beta, s.incy = 2;
      check::GemvData d = check::make_gemv_data(s, 3);
      std::fill(d.A.begin(), d.A.end(), std::numeric_limits<float>::quiet_NaN());
      std::fill(d.x.begin(), d.x.end(), std::numeric_limits<float>::quiet_NaN());
      if (beta == 0.0f) std::fill(d.y0.begin(), d.y0.end(), std::numeric_limits<float>::quiet_NaN());
      const check::GemvReference r = check::gemv_reference(s, d);
      for (int64_t i = 0; i < check::gemv_out_len(s); ++i) {
        EXPECT_EQ(r.ref[i], beta == 0.0f ? 0.0 : beta * static_cast<double>(d.y0[i * 2]));
        EXPECT_FALSE(std::isnan(r.mag[i]));
      }
    }
  check::GemvShape e;  // Trans::N with n = 0: y = beta * y0 over m elements
  e.m = 4, e.n = 0, e.beta = 2.0f;
  const check::GemvData d = check::make_gemv_data(e, 4);
  const check::GemvReference r = check::gemv_reference(e, d);
  ASSERT_EQ(r.ref.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.ref[i], 2.0 * d.y0[i]);
  std::vector<float> y(d.y0);
  for (float& v : y) v *= 2.0f;
  EXPECT_TRUE(check::compare_gemv(e, r, y.data(), d.y0.data()).pass);
}

TEST(GemvCheck, PlainFp32PassesAndFaultsFail) {
  for (Trans t : {Trans::N, Trans::T}) {
    check::GemvShape s;
    s.trans = t, s.m = 64, s.n = 4096, s.alpha = 1.5f, s.beta = 0.75f, s.incy = 2;
    if (t == Trans::T) std::swap(s.m, s.n);  // k = 4096 both ways
    s = check::normalized(s);
    const check::GemvData d = check::make_gemv_data(s, 77);
    const check::GemvReference r = check::gemv_reference(s, d);
    const std::vector<float> good = fp32_gemv(s, d);
    const check::GemmErrors ok = check::compare_gemv(s, r, good.data(), d.y0.data());
    EXPECT_TRUE(ok.pass) << ok.reason;
    EXPECT_LT(ok.bound_ratio, 0.2);

    std::vector<float> y = good;  // one element 3x beyond the element-wise bound
    y[5 * s.incy] = static_cast<float>(r.ref[5] + 3 * check::elementwise_gamma(4096) * r.mag[5]);
    auto e = check::compare_gemv(s, r, y.data(), d.y0.data());
    EXPECT_FALSE(e.pass);
    EXPECT_GT(e.bound_ratio, 1.0);

    y = good;  // a NaN where the reference is finite
    y[7 * s.incy] = std::numeric_limits<float>::quiet_NaN();
    e = check::compare_gemv(s, r, y.data(), d.y0.data());
    EXPECT_FALSE(e.pass);
    EXPECT_EQ(e.bad, 1);

    y = good;  // a write into a stride gap of y
    y[3] = 0.0f;
    e = check::compare_gemv(s, r, y.data(), d.y0.data());
    EXPECT_FALSE(e.pass);
    EXPECT_NE(e.reason.find("stride gaps"), std::string::npos) << e.reason;

    y = good;  // a gap that still holds a NaN, another NaN bit pattern: NaN-aware, not a write
    uint32_t other_nan = 0x7FC00123u;
    std::memcpy(&y[1], &other_nan, 4);
    e = check::compare_gemv(s, r, y.data(), d.y0.data());
    EXPECT_TRUE(e.pass) << e.reason;

    const std::vector<float> dropped = fp32_gemv(s, d, 1);  // the last term of every dot product
    e = check::compare_gemv(s, r, dropped.data(), d.y0.data());
    EXPECT_FALSE(e.pass);
    EXPECT_GT(e.normwise, check::normwise_tolerance(4096));

    const std::vector<float> tf32 = fp32_gemv(s, d, 0, true);  // inputs rounded to tf32
    e = check::compare_gemv(s, r, tf32.data(), d.y0.data());
    EXPECT_FALSE(e.pass);
    EXPECT_GT(e.normwise, check::normwise_tolerance(4096));
  }
}

TEST(GemvCheck, PoisonedOutputIsCaught) {  // beta == 0, y all NaN before the call, one left unwritten
  check::GemvShape s;
  s.m = 33, s.n = 65;
  const check::GemvData d = check::make_gemv_data(s, 8);
  std::vector<float> poison(d.y0.size());
  const uint32_t ones = 0xFFFFFFFFu;
  for (float& v : poison) std::memcpy(&v, &ones, 4);
  std::vector<float> y = fp32_gemv(s, d);
  EXPECT_TRUE(check::compare_gemv(s, check::gemv_reference(s, d), y.data(), poison.data()).pass);
  y[32] = poison[32];
  const auto e = check::compare_gemv(s, check::gemv_reference(s, d), y.data(), poison.data());
  EXPECT_FALSE(e.pass);
  EXPECT_EQ(e.bad, 1);
}

// -------------------------------------------------------------------------------- reduce

const DType kAll[4] = {DType::i32, DType::i64, DType::f32, DType::f64};

double value_at(const check::ReduceData& d, int64_t i) {
  switch (d.dtype) {
    case DType::i32: return d.i32[i];
    case DType::i64: return static_cast<double>(d.i64[i]);
    case DType::f32: return d.f32[i];
    case DType::f64: return d.f64[i];
  }
  return 0;
}

check::ReduceData from_doubles(DType t, const std::vector<double>& v) {
  check::ReduceData d;
  d.dtype = t;
  d.n = static_cast<int64_t>(v.size());
  for (double x : v) {
    if (t == DType::f32) d.f32.push_back(static_cast<float>(x));
    if (t == DType::f64) d.f64.push_back(x);
  }
  return d;
}

// Plain sums in the input type, the way GPU trees and loops do them.
template <typename T>
T pairwise(const T* p, int64_t n) {
  if (n == 1) return p[0];
  const int64_t h = n / 2;
  return pairwise(p, h) + pairwise(p + h, n - h);
}
template <typename T>
T sequential(const std::vector<T>& v) {
  T s = 0;
  for (T x : v) s += x;
  return s;
}
double neumaier(const std::vector<double>& v) {  // compensated double sum (what an accurate f64 rung does)
  double s = 0, c = 0;
  for (double x : v) {
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return s + c;
}

check::ReduceErrors check_float(const check::ReduceData& d, float v, bool accurate) {
  return check::compare_reduce(d, check::reduce_reference(d), &v, accurate);
}
check::ReduceErrors check_double(const check::ReduceData& d, double v, bool accurate) {
  return check::compare_reduce(d, check::reduce_reference(d), &v, accurate);
}

TEST(ReduceCheck, DataAccessorsAndSeeds) {
  for (DType t : kAll) {
    const check::ReduceData d = check::make_reduce_data(t, 1000, 9);
    EXPECT_EQ(d.dtype, t);
    EXPECT_EQ(d.n, 1000);
    EXPECT_EQ(d.bytes(), 1000u * (t == DType::i32 || t == DType::f32 ? 4 : 8));
    ASSERT_NE(d.data(), nullptr);
    EXPECT_EQ(0, std::memcmp(d.data(), check::make_reduce_data(t, 1000, 9).data(), d.bytes()));
    EXPECT_NE(0, std::memcmp(d.data(), check::make_reduce_data(t, 1000, 10).data(), d.bytes()));
    const check::ReduceData empty = check::make_reduce_data(t, 0, 9);
    EXPECT_EQ(empty.bytes(), 0u);
  }
}

TEST(ReduceCheck, PatternsHaveTheirProperties) {
  const int64_t n = 100003;
  {  // random ints cover the whole range, both signs
    const auto a = check::make_reduce_data(DType::i32, n, 1);
    const auto [lo, hi] = std::minmax_element(a.i32.begin(), a.i32.end());
    EXPECT_LT(*lo, -(1 << 30));
    EXPECT_GT(*hi, 1 << 30);
    const auto b = check::make_reduce_data(DType::i64, n, 1);
    const auto [lo64, hi64] = std::minmax_element(b.i64.begin(), b.i64.end());
    EXPECT_LT(*lo64, -(int64_t{1} << 62));
    EXPECT_GT(*hi64, int64_t{1} << 62);
  }
  for (DType t : {DType::f32, DType::f64}) {  // random floats: [-1, 1], |x| >= 2^-8, both signs
    const auto d = check::make_reduce_data(t, n, 2);
    int neg = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = value_at(d, i);
      ASSERT_GE(std::fabs(v), 1.0 / 256) << i;
      ASSERT_LE(std::fabs(v), 1.0) << i;
      neg += v < 0;
    }
    EXPECT_NEAR(neg, n / 2, n / 50);
  }
  for (DType t : kAll) {  // article: 0..n-1; integers: [-8, 8], both ends present
    const auto a = check::make_reduce_data(t, n, 3, check::ReducePattern::article);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(value_at(a, i), static_cast<double>(i));
    const auto g = check::make_reduce_data(t, n, 3, check::ReducePattern::integers);
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = value_at(g, i);
      ASSERT_EQ(v, std::round(v));
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    EXPECT_EQ(lo, -8.0);
    EXPECT_EQ(hi, 8.0);
  }
  for (DType t : {DType::f32, DType::f64}) {  // cancellation: the large pairs cancel exactly, sum|x| >> |sum|
    const int64_t m = (1 << 20) + 3;
    const auto d = check::make_reduce_data(t, m, 4, check::ReducePattern::cancellation);
    const auto e = check::reduce_reference(d);
    EXPECT_GT(e.abs_sum, 1e4 * std::fabs(e.hi)) << "sum|x| " << e.abs_sum << ", sum " << e.hi;
    double big = 0;
    std::vector<double> evens;
    for (int64_t i = 0; i < m; i += 2) evens.push_back(value_at(d, i)), big = std::max(big, std::fabs(value_at(d, i)));
    EXPECT_GE(big, t == DType::f32 ? 0x1p24 : 0x1p53);
    if (evens.size() % 2) evens.pop_back();  // an odd count of even positions: the last is a small value
    const auto pairs = check::reduce_reference(from_doubles(DType::f64, evens));
    EXPECT_EQ(pairs.hi, 0.0);
    EXPECT_EQ(pairs.lo, 0.0);
    // Partners are not neighbours: adjacent even positions rarely cancel.
    int adjacent = 0;
    for (size_t i = 0; i + 1 < evens.size(); i += 2) adjacent += evens[i] == -evens[i + 1];
    EXPECT_LT(adjacent, 10);
  }
}

TEST(ReduceCheck, IntReferenceIsExactAndWraps) {
  check::ReduceData w;
  w.dtype = DType::i64, w.n = 2, w.i64 = {std::numeric_limits<int64_t>::max(), 1};
  EXPECT_EQ(check::reduce_reference(w).isum, std::numeric_limits<int64_t>::min());
  w.i64 = {std::numeric_limits<int64_t>::min(), -1};
  EXPECT_EQ(check::reduce_reference(w).isum, std::numeric_limits<int64_t>::max());
  // int32 sums in int64, never wraps; n >= 2^22 takes the multithreaded path.
  check::ReduceData m;
  m.dtype = DType::i32, m.n = (1 << 22) + 5;
  m.i32.assign(static_cast<size_t>(m.n), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(check::reduce_reference(m).isum, m.n * int64_t{std::numeric_limits<int32_t>::max()});
  for (DType t : {DType::i32, DType::i64}) {
    const auto a = check::make_reduce_data(t, (1 << 22) + 3, 5, check::ReducePattern::article);
    const int64_t n = a.n;
    EXPECT_EQ(check::reduce_reference(a).isum, n * (n - 1) / 2);  // values below 2^31: no int32 wrap
    const auto r = check::make_reduce_data(t, (1 << 22) + 7, 6);
    uint64_t s = 0;
    for (int64_t i = 0; i < r.n; ++i)
      s += static_cast<uint64_t>(t == DType::i32 ? static_cast<int64_t>(r.i32[i]) : r.i64[i]);
    EXPECT_EQ(check::reduce_reference(r).isum, static_cast<int64_t>(s));
  }
}

TEST(ReduceCheck, FloatReferenceIsExact) {
  auto exact = [](DType t, std::vector<double> v) { return check::reduce_reference(from_doubles(t, v)); };
  auto e = exact(DType::f64, {1e16, 1.0, -1e16});
  EXPECT_EQ(e.hi, 1.0);
  EXPECT_EQ(e.lo, 0.0);
  EXPECT_EQ(e.abs_sum, 2e16 + 1);
  e = exact(DType::f64, {1.0, std::ldexp(1.0, -80)});  // below double precision: kept in lo
  EXPECT_EQ(e.hi, 1.0);
  EXPECT_EQ(e.lo, std::ldexp(1.0, -80));
  e = exact(DType::f64, {1e308, 1e308, -1e308});  // no intermediate overflow
  EXPECT_EQ(e.hi, 1e308);
  e = exact(DType::f64, {std::ldexp(1.0, -1074), std::ldexp(1.0, -1074), -0.0});  // subnormals
  EXPECT_EQ(e.hi, std::ldexp(1.0, -1073));
  e = exact(DType::f64, {std::ldexp(1.0, 1000), std::ldexp(1.0, -1000), -std::ldexp(1.0, 1000)});
  EXPECT_EQ(e.hi, std::ldexp(1.0, -1000));
  e = exact(DType::f32, {16777216.0, 1.0, 1.0, -16777216.0});  // 2^24 + 1 + 1 - 2^24: float would say 0
  EXPECT_EQ(e.hi, 2.0);
  e = exact(DType::f64, {-3.5, 1.25});
  EXPECT_EQ(e.hi, -2.25);
  // Large n, both paths (n >= 2^22 is threaded): integer-valued floats have an integer sum.
  for (DType t : {DType::f32, DType::f64})
    for (auto p : {check::ReducePattern::integers, check::ReducePattern::article}) {
      const auto d = check::make_reduce_data(t, (1 << 22) + 3, 7, p);
      long long s = 0;
      for (int64_t i = 0; i < d.n; ++i) s += static_cast<long long>(value_at(d, i));
      const auto r = check::reduce_reference(d);
      EXPECT_EQ(r.hi + r.lo, static_cast<double>(s));
      EXPECT_EQ(r.hi, static_cast<double>(s));
    }
  // Exactness means order independence: the reversed cancellation data gives the same bits.
  for (DType t : {DType::f32, DType::f64}) {
    auto d = check::make_reduce_data(t, (1 << 22) + 1, 8, check::ReducePattern::cancellation);
    const auto fwd = check::reduce_reference(d);
    if (t == DType::f32) std::reverse(d.f32.begin(), d.f32.end()); else std::reverse(d.f64.begin(), d.f64.end());
    const auto rev = check::reduce_reference(d);
    EXPECT_EQ(fwd.hi, rev.hi);
    EXPECT_EQ(fwd.lo, rev.lo);
  }
}

TEST(ReduceCheck, SpecialValuesAreFlagged) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  auto e = check::reduce_reference(from_doubles(DType::f64, {1.0, nan, 2.0}));
  EXPECT_TRUE(e.has_nan);
  EXPECT_EQ(e.hi, 3.0);  // the finite part, for the record
  e = check::reduce_reference(from_doubles(DType::f32, {1.0, inf, -inf}));
  EXPECT_TRUE(e.pos_inf && e.neg_inf && !e.has_nan);
}

TEST(ReduceCheck, IntsMustBeExact) {
  for (DType t : {DType::i32, DType::i64}) {
    const auto d = check::make_reduce_data(t, 5000, 11);
    const auto e = check::reduce_reference(d);
    int64_t r = e.isum;
    EXPECT_TRUE(check::compare_reduce(d, e, &r, false).pass);
    EXPECT_EQ(check::reduce_tolerance(d, e, true), 0.0);
    for (int64_t off : {1, -1}) {
      r = static_cast<int64_t>(static_cast<uint64_t>(e.isum) + static_cast<uint64_t>(off));
      const auto c = check::compare_reduce(d, e, &r, true);
      EXPECT_FALSE(c.pass);
      EXPECT_EQ(c.abs_err, 1.0);
      EXPECT_NE(c.reason.find("off by " + std::to_string(off)), std::string::npos) << c.reason;
    }
  }
}

TEST(ReduceCheck, ToleranceFormulas) {
  const auto one = from_doubles(DType::f32, {1.0});
  const auto e1 = check::reduce_reference(one);
  EXPECT_EQ(check::reduce_tolerance(one, e1, true), std::ldexp(1.0, -23) + std::ldexp(1.0, -40));
  EXPECT_EQ(check::reduce_tolerance(one, e1, false), std::ldexp(1.0, -23));  // n - 1 = 0 adds
  const auto three = from_doubles(DType::f64, {1.0, 2.0, 3.0});
  const auto e3 = check::reduce_reference(three);
  EXPECT_EQ(check::reduce_tolerance(three, e3, true), std::ldexp(1.0, -50) + 6 * std::ldexp(1.0, -69));
  EXPECT_EQ(check::reduce_tolerance(three, e3, false), std::ldexp(1.0, -50) + 2 * 6 * std::ldexp(1.0, -53));
  // Rounded exact sum next to a power of two: the ulp is that of the float the sum rounds to.
  const auto below = from_doubles(DType::f32, {1.0, -std::ldexp(1.0, -30)});
  const auto eb = check::reduce_reference(below);
  EXPECT_EQ(check::reduce_tolerance(below, eb, true), std::ldexp(1.0, -23) + (1 + std::ldexp(1.0, -30)) * std::ldexp(1.0, -40));
  // n = 0: the sum is 0 and only 0 passes.
  const auto empty = from_doubles(DType::f32, {});
  EXPECT_TRUE(check_float(empty, 0.0f, true).pass);
  EXPECT_FALSE(check_float(empty, std::nanf(""), true).pass);
}

TEST(ReduceCheck, FloatBoundsOneUlpPassesMoreFails) {
  // Positive data, no cancellation: sum|x| = sum, so the accurate bound is about 1 ulp.
  const auto d = from_doubles(DType::f32, {1.0, 2.0, 3.0, 0.5});
  const float exact = 6.5f;
  EXPECT_TRUE(check_float(d, exact, true).pass);
  EXPECT_TRUE(check_float(d, std::nextafter(exact, 10.0f), true).pass);
  EXPECT_TRUE(check_float(d, std::nextafter(exact, 0.0f), true).pass);
  const float two_off = std::nextafter(std::nextafter(exact, 10.0f), 10.0f);
  const auto c = check_float(d, two_off, true);
  EXPECT_FALSE(c.pass);
  EXPECT_GT(c.bound_ratio, 1.0);
  EXPECT_NE(c.reason.find("accurate bound"), std::string::npos) << c.reason;
  // The plain bound for n = 4 allows 3 u sum|x| + 1 ulp: two ulps pass it.
  EXPECT_TRUE(check_float(d, two_off, false).pass);
  const auto dd = from_doubles(DType::f64, {0.1, 0.2, 0.3});
  const auto e = check::reduce_reference(dd);
  EXPECT_TRUE(check_double(dd, e.hi, true).pass);
  EXPECT_TRUE(check_double(dd, (0.1 + 0.2) + 0.3, true).pass);
  EXPECT_FALSE(check_double(dd, std::nextafter(std::nextafter(e.hi, 1.0), 1.0), true).pass);
}

TEST(ReduceCheck, SpecialValueRules) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const float finf = std::numeric_limits<float>::infinity(), fnan = std::nanf("");
  for (bool acc : {true, false}) {
    const auto n1 = from_doubles(DType::f32, {1.0, nan, 2.0});
    EXPECT_TRUE(check_float(n1, fnan, acc).pass);
    EXPECT_FALSE(check_float(n1, 3.0f, acc).pass);
    EXPECT_FALSE(check_float(n1, finf, acc).pass);
    const auto p = from_doubles(DType::f64, {1.0, inf, 2.0});
    EXPECT_TRUE(check_double(p, inf, acc).pass);
    EXPECT_FALSE(check_double(p, nan, acc).pass);
    EXPECT_FALSE(check_double(p, -inf, acc).pass);
    EXPECT_FALSE(check_double(p, 3.0, acc).pass);
    const auto m = from_doubles(DType::f32, {-inf, 5.0});
    EXPECT_TRUE(check_float(m, -finf, acc).pass);
    EXPECT_FALSE(check_float(m, finf, acc).pass);
    const auto pm = from_doubles(DType::f64, {inf, 1.0, -inf});
    EXPECT_TRUE(check_double(pm, nan, acc).pass);
    EXPECT_FALSE(check_double(pm, inf, acc).pass);
    EXPECT_FALSE(check_double(pm, -inf, acc).pass);
    const auto ni = from_doubles(DType::f64, {inf, nan});
    EXPECT_TRUE(check_double(ni, nan, acc).pass);
    EXPECT_FALSE(check_double(ni, inf, acc).pass);
    const auto fin = from_doubles(DType::f32, {1.0, 2.0});  // finite input: a non-finite result fails
    EXPECT_FALSE(check_float(fin, fnan, acc).pass);
    EXPECT_FALSE(check_float(fin, finf, acc).pass);
    const auto big = from_doubles(DType::f32, {3e38, 3e38});  // the exact sum overflows float: Inf
    EXPECT_TRUE(check_float(big, finf, acc).pass);
    EXPECT_FALSE(check_float(big, fnan, acc).pass);
  }
}

// The demonstration the accurate bound exists for: on the cancellation pattern a plain float
// pairwise tree (and a sequential float loop) fail it, while the same sum carried in double and
// rounded to float meets it; for f64 a plain double tree fails and a compensated sum passes.
// Both plain sums stay inside the plain bound, which holds for any order.
TEST(ReduceCheck, CancellationPlainTreeFailsAccurateBound) {
  const int64_t n = (1 << 20) + 3;
  {
    const auto d = check::make_reduce_data(DType::f32, n, 21, check::ReducePattern::cancellation);
    const float tree = pairwise(d.f32.data(), n), seq = sequential(d.f32);
    double dsum = 0;
    for (float x : d.f32) dsum += x;
    std::vector<double> wide(d.f32.begin(), d.f32.end());
    const float dtree = static_cast<float>(pairwise(wide.data(), n));
    const auto t = check_float(d, tree, true), s = check_float(d, seq, true);
    const auto g = check_float(d, static_cast<float>(dsum), true), gt = check_float(d, dtree, true);
    std::cout << "f32 cancellation, n = " << n << ": accurate bound " << t.bound << "; plain float tree error "
              << t.abs_err << " (" << t.bound_ratio << "x), sequential float " << s.abs_err << " (" << s.bound_ratio
              << "x), double accumulation " << g.abs_err << " (" << g.bound_ratio << "x)\n";
    EXPECT_FALSE(t.pass);
    EXPECT_GT(t.bound_ratio, 10.0);
    EXPECT_FALSE(s.pass);
    EXPECT_TRUE(g.pass) << g.reason;
    EXPECT_TRUE(gt.pass) << gt.reason;
    EXPECT_TRUE(check_float(d, tree, false).pass);
    EXPECT_TRUE(check_float(d, seq, false).pass);
  }
  {
    const auto d = check::make_reduce_data(DType::f64, n, 22, check::ReducePattern::cancellation);
    const double tree = pairwise(d.f64.data(), n), comp = neumaier(d.f64);
    const auto t = check_double(d, tree, true), c = check_double(d, comp, true);
    std::cout << "f64 cancellation: accurate bound " << t.bound << "; plain double tree error " << t.abs_err << " ("
              << t.bound_ratio << "x), compensated " << c.abs_err << " (" << c.bound_ratio << "x)\n";
    EXPECT_FALSE(t.pass);
    EXPECT_GT(t.bound_ratio, 10.0);
    EXPECT_TRUE(c.pass) << c.reason;
    EXPECT_TRUE(check_double(d, tree, false).pass);
  }
}

TEST(ReduceCheck, PlainSumsOfRandomDataPassThePlainBound) {
  const auto f = check::make_reduce_data(DType::f32, 300007, 31);
  EXPECT_TRUE(check_float(f, pairwise(f.f32.data(), f.n), false).pass);
  EXPECT_TRUE(check_float(f, sequential(f.f32), false).pass);
  const auto g = check::make_reduce_data(DType::f64, 300007, 32);
  EXPECT_TRUE(check_double(g, pairwise(g.f64.data(), g.n), false).pass);
  EXPECT_TRUE(check_double(g, sequential(g.f64), false).pass);
  EXPECT_TRUE(check_double(g, neumaier(g.f64), true).pass);
}

// Testing the test: broken reductions must fail. Dropping or doubling one element fails every
// integer check; on float data the accurate bound catches it, and the plain bound, loose by
// design at large n, is backed by the integers pattern, whose sums are exact in any order.
TEST(ReduceCheck, BrokenReductionsFail) {
  for (DType t : {DType::i32, DType::i64}) {
    const auto d = check::make_reduce_data(t, 4097, 41);
    const auto e = check::reduce_reference(d);
    const int64_t last = t == DType::i32 ? d.i32.back() : d.i64.back();
    int64_t dropped = static_cast<int64_t>(static_cast<uint64_t>(e.isum) - static_cast<uint64_t>(last));
    int64_t doubled = static_cast<int64_t>(static_cast<uint64_t>(e.isum) + static_cast<uint64_t>(last));
    EXPECT_FALSE(check::compare_reduce(d, e, &dropped, false).pass);
    EXPECT_FALSE(check::compare_reduce(d, e, &doubled, false).pass);
  }
  const int64_t n = (1 << 20) + 7;
  const auto f = check::make_reduce_data(DType::f32, n, 42);
  std::vector<double> wide(f.f32.begin(), f.f32.end() - 1);
  const float dropped = static_cast<float>(pairwise(wide.data(), n - 1));
  EXPECT_FALSE(check_float(f, dropped, true).pass);
  const auto g = check::make_reduce_data(DType::f32, n, 43, check::ReducePattern::integers);
  std::vector<float> head(g.f32);
  while (head.back() == 0.0f) head.pop_back();  // drop the last non-zero element (a dropped 0 is harmless)
  head.pop_back();
  const float gd = pairwise(head.data(), static_cast<int64_t>(head.size()));
  const auto ge = check::reduce_reference(g);
  EXPECT_EQ(static_cast<double>(pairwise(g.f32.data(), n)), ge.hi) << "any order is exact on the integers pattern";
  EXPECT_NE(static_cast<double>(gd), ge.hi) << "so a dropped element shows as an inexact sum";
  // A single element counted twice in a cancellation sum (a wrong tail index): fails accurate.
  const auto c = check::make_reduce_data(DType::f64, 1001, 44, check::ReducePattern::cancellation);
  const double twice = neumaier(c.f64) + c.f64[500];
  EXPECT_FALSE(check_double(c, twice, true).pass);
}

}  // namespace
}  // namespace rungs::test
