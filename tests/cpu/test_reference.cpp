// The CPU references against a plain triple loop in long double, and the verification
// module's tolerances against simulated faults (no GPU needed: runs in CI).
#include <rungs/reference.hpp>

#include "check/gemm_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace rungs::test {
namespace {

long double slow_entry(const check::GemmShape& s, const check::GemmData& d, int64_t i, int64_t j) {
  long double acc = 0;
  for (int64_t p = 0; p < s.k; ++p) {
    const float a = s.ta == Trans::N ? d.A[i * s.lda + p] : d.A[p * s.lda + i];
    const float b = s.tb == Trans::N ? d.B[p * s.ldb + j] : d.B[j * s.ldb + p];
    acc += static_cast<long double>(a) * b;
  }
  return s.alpha * acc + (s.beta == 0 ? 0.0L : static_cast<long double>(s.beta) * d.C0[i * s.ldc + j]);
}

TEST(Reference, MatchesTripleLoopAllTransposes) {
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T}) {
      check::GemmShape s;
      s.ta = ta, s.tb = tb, s.m = 37, s.n = 29, s.k = 51, s.alpha = -1.25f, s.beta = 0.5f;
      s = check::normalized(s);
      s.lda += 3, s.ldb += 1, s.ldc += 2;
      const check::GemmData d = check::make_gemm_data(s, 7);
      std::vector<double> C(d.C0.begin(), d.C0.end());
      reference::gemm(ta, tb, s.m, s.n, s.k, s.alpha, d.A.data(), s.lda, d.B.data(), s.ldb, s.beta, C.data(), s.ldc, 3);
      const check::GemmReference r = check::gemm_reference(s, d);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          const long double want = slow_entry(s, d, i, j);
          ASSERT_NEAR(C[i * s.ldc + j], static_cast<double>(want), 1e-12) << i << "," << j;
          ASSERT_NEAR(r.ref[i * s.n + j], static_cast<double>(want), 1e-12) << i << "," << j;
        }
      // Padding of C is not touched by the reference.
      EXPECT_TRUE(std::isnan(C[s.n]));
    }
}

// Few rows against many columns (decode shapes): the reference splits the columns over threads
// when the rows are fewer than its threads (one per 2^20 multiply-adds, so on 2 cores and more
// these run split); every element as the triple loop, ragged last column block included.
TEST(Reference, FewRowsSplitOverColumns) {
  for (int64_t m : {1, 2, 3}) {
    check::GemmShape s;
    s.ta = Trans::N, s.tb = Trans::T, s.m = m, s.n = 777, s.k = 4100, s.alpha = 0.75f, s.beta = -2.0f;
    s = check::normalized(s);
    const check::GemmData d = check::make_gemm_data(s, 21 + static_cast<uint64_t>(m));
    const check::GemmReference r = check::gemm_reference(s, d);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j)
        ASSERT_NEAR(r.ref[i * s.n + j], static_cast<double>(slow_entry(s, d, i, j)), 1e-11) << m << ": " << i << "," << j;
  }
}

TEST(Reference, EmptyProductAndBetaZeroIgnoreNaN) {
  std::vector<double> C(6, std::nan(""));
  reference::gemm(Trans::N, Trans::N, 2, 3, 0, 1.0, nullptr, 1, nullptr, 3, 0.0, C.data(), 3);
  for (double x : C) EXPECT_EQ(x, 0.0);
}

TEST(Reference, NaiveFp32IsCloseAndSequential) {
  check::GemmShape s;
  s.m = 40, s.n = 45, s.k = 300;
  s = check::normalized(s);
  const check::GemmData d = check::make_gemm_data(s, 11);
  std::vector<float> C(d.C0);
  reference::gemm_naive_fp32(s.ta, s.tb, s.m, s.n, s.k, 1.0f, d.A.data(), s.lda, d.B.data(), s.ldb, 0.0f, C.data(), s.ldc);
  const auto e = check::compare_gemm(s, check::gemm_reference(s, d), C.data());
  EXPECT_TRUE(e.pass) << e.reason;
  EXPECT_GT(e.normwise, 0.0);  // float accumulation does round
}

TEST(Data, RandomNonZeroWithNaNPadding) {
  check::GemmShape s;
  s.m = 10, s.n = 10, s.k = 10, s.lda = 12;
  const check::GemmData d = check::make_gemm_data(s, 1), d2 = check::make_gemm_data(s, 2);
  for (int64_t r = 0; r < 10; ++r) {
    for (int64_t c = 0; c < 10; ++c) {
      EXPECT_GE(std::fabs(d.A[r * 12 + c]), 1.0f / 256);
      EXPECT_LE(std::fabs(d.A[r * 12 + c]), 1.0f);
    }
    EXPECT_TRUE(std::isnan(d.A[r * 12 + 10]));
  }
  EXPECT_NE(d.A[0], d2.A[0]);
  EXPECT_EQ(check::make_gemm_data(s, 1).B, d.B);  // deterministic per seed
}

// --- testing the test, on the CPU: simulated faulty results must fail, rounding must pass ---

float round_tf32(float x) {  // round to nearest, ties away, 10 explicit mantissa bits
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Sim {
  check::GemmShape s;
  check::GemmData d;
  check::GemmReference r;
};
Sim make_sim(int64_t m, int64_t n, int64_t k) {
  Sim x;
  x.s.m = m, x.s.n = n, x.s.k = k;
  x.s = check::normalized(x.s);
  x.d = check::make_gemm_data(x.s, 99);
  x.r = check::gemm_reference(x.s, x.d);
  return x;
}
// A float-accumulating dot product (sequential, FMA) with optional faults.
std::vector<float> simulate(const Sim& x, bool tf32, bool drop_last) {
  std::vector<float> C(static_cast<size_t>(x.s.m * x.s.ldc));
  for (int64_t i = 0; i < x.s.m; ++i)
    for (int64_t j = 0; j < x.s.n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < x.s.k - (drop_last ? 1 : 0); ++p) {
        float a = x.d.A[i * x.s.lda + p], b = x.d.B[p * x.s.ldb + j];
        if (tf32) a = round_tf32(a), b = round_tf32(b);
        acc = std::fma(a, b, acc);
      }
      C[i * x.s.ldc + j] = acc;
    }
  return C;
}

TEST(TestTheTestCpu, SequentialFp32PassesWithMargin) {
  const Sim x = make_sim(64, 64, 4096);
  const auto e = check::compare_gemm(x.s, x.r, simulate(x, false, false).data());
  EXPECT_TRUE(e.pass) << e.reason;
  EXPECT_LT(e.normwise * 4, check::normwise_tolerance(x.s.k)) << "tolerance has less than 4x headroom";
}

TEST(TestTheTestCpu, Tf32RoundingSlipsPastElementwiseButFailsNormwise) {
  const Sim x = make_sim(64, 64, 4096);
  const auto e = check::compare_gemm(x.s, x.r, simulate(x, true, false).data());
  EXPECT_LE(e.bound_ratio, 1.0);  // why the normwise check exists
  EXPECT_FALSE(e.pass);
  EXPECT_GT(e.normwise, 5 * check::normwise_tolerance(x.s.k));
}

TEST(TestTheTestCpu, DroppedTermFails) {
  const Sim x = make_sim(48, 48, 4096);
  const auto e = check::compare_gemm(x.s, x.r, simulate(x, false, true).data());
  EXPECT_FALSE(e.pass);
}

TEST(TestTheTestCpu, OneWrongOrUnwrittenElementFails) {
  const Sim x = make_sim(30, 31, 64);
  auto C = simulate(x, false, false);
  C[5 * x.s.ldc + 7] *= 1.0f + 1e-4f;
  EXPECT_FALSE(check::compare_gemm(x.s, x.r, C.data()).pass);
  C = simulate(x, false, false);
  C[29 * x.s.ldc + 30] = std::nanf("");
  const auto e = check::compare_gemm(x.s, x.r, C.data());
  EXPECT_FALSE(e.pass);
  EXPECT_EQ(e.bad, 1);
}

TEST(TestTheTestCpu, SampledRowsIncludeEdges) {
  check::GemmShape s;
  s.m = 1000, s.n = 3, s.k = 2;
  const auto d = check::make_gemm_data(s, 5);
  const auto r = check::gemm_reference(s, d, 16, 3);
  ASSERT_EQ(r.rows.size(), 16u);
  EXPECT_EQ(r.rows.front(), 0);
  EXPECT_EQ(r.rows.back(), 999);
}

}  // namespace
}  // namespace rungs::test
