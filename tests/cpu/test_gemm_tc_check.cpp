// The tolerances of the tensor-core kinds (check::compare_gemm(..., kind)) against simulated
// kernels on the CPU: the faithful ones pass, the broken ones fail, so each tolerance is shown
// to be both loose enough and tight enough (no GPU needed: runs in CI).
#include "check/gemm_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace rungs::test {
namespace {

using check::GemmKind;

float tf32_round(float x) {  // round to nearest, ties away (cvt.rna.tf32.f32)
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}
float tf32_trunc(float x) {  // what a tensor core does with raw fp32 bits
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}
float round_toward_zero(double d) {
  float f = static_cast<float>(d);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return f;
}

// A simulated kernel: one C element from the row of op(A) and the column of op(B) (length k).
using Kernel = std::function<float(const float* a, const float* b, int64_t k)>;

check::GemmErrors simulate(GemmKind kind, int64_t k, bool positive, const Kernel& f, bool round_output = false) {
  check::GemmShape s;
  s.m = 8, s.n = 8, s.k = k;
  s = check::normalized(s);
  check::GemmData d = check::make_gemm_data(s, 4242);
  if (positive)
    for (auto* v : {&d.A, &d.B})
      for (float& x : *v) x = std::fabs(x);
  check::round_inputs(d, kind);
  const check::GemmReference r = check::gemm_reference(s, d);
  std::vector<float> C(static_cast<size_t>(s.m * s.ldc));
  std::vector<float> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      for (int64_t p = 0; p < k; ++p) a[p] = d.A[i * s.lda + p], b[p] = d.B[p * s.ldb + j];
      C[i * s.ldc + j] = f(a.data(), b.data(), k);
    }
  if (round_output) C = check::from_16bit(check::to_16bit(C, kind), kind);
  return check::compare_gemm(s, r, C.data(), kind);
}

// fp32 accumulation of exact products, rounded once to the output format: f16 and bf16 pass;
// the same numbers judged as f32 fail (the output rounding is far above fp32's tolerance).
TEST(GemmTcCheck, SixteenBitOutputRoundingPassesItsKindOnly) {
  const Kernel fp32 = [](const float* a, const float* b, int64_t k) {
    float acc = 0;
    for (int64_t p = 0; p < k; ++p) acc = std::fma(a[p], b[p], acc);
    return acc;
  };
  for (GemmKind kind : {GemmKind::f16, GemmKind::bf16}) {
    const auto e = simulate(kind, 4096, false, fp32, true);
    EXPECT_TRUE(e.pass) << check::gemm_kind_name(kind) << ": " << e.reason;
  }
  // Judged by the fp32 tolerance, a bf16-rounded result fails.
  check::GemmShape s;
  s.m = 8, s.n = 8, s.k = 512;
  s = check::normalized(s);
  const check::GemmData d = check::make_gemm_data(s, 5);
  const check::GemmReference r = check::gemm_reference(s, d);
  std::vector<float> C(64);
  for (int i = 0; i < 64; ++i) C[i] = static_cast<float>(r.ref[i]);
  C = check::from_16bit(check::to_16bit(C, GemmKind::bf16), GemmKind::bf16);
  EXPECT_FALSE(check::compare_gemm(s, r, C.data(), GemmKind::f32).pass);
  EXPECT_TRUE(check::compare_gemm(s, r, C.data(), GemmKind::bf16).pass);
}

// A product in f16's subnormal range (below 2^-14) rounds to a multiple of 2^-24, not to 2^-11
// relative: 201 * 2^-12 times 2^-13 = 100.5 * 2^-24 rounds to 100 * 2^-24 (ties to even), 0.5 %
// off. The f16 bound's eta (2^-25) admits exactly that rounding and nothing coarser.
TEST(GemmTcCheck, F16SubnormalResultRoundsToItsSpacing) {
  check::GemmShape s;
  s.m = 1, s.n = 1, s.k = 1;
  s = check::normalized(s);
  check::GemmData d = check::make_gemm_data(s, 7);
  d.A[0] = std::ldexp(201.0f, -12), d.B[0] = std::ldexp(1.0f, -13);
  const check::GemmReference r = check::gemm_reference(s, d);
  ASSERT_EQ(r.ref[0], std::ldexp(100.5, -24));
  std::vector<float> C = check::from_16bit(check::to_16bit({static_cast<float>(r.ref[0])}, GemmKind::f16), GemmKind::f16);
  ASSERT_EQ(C[0], std::ldexp(100.0f, -24));
  EXPECT_EQ(check::output_eta(GemmKind::f16), std::ldexp(1.0, -25));
  EXPECT_TRUE(check::compare_gemm(s, r, C.data(), GemmKind::f16).pass);
  C[0] = std::ldexp(99.0f, -24);  // the next subnormal down: 1.5 spacings off
  EXPECT_FALSE(check::compare_gemm(s, r, C.data(), GemmKind::f16).pass);
}

// Accumulating in the 16-bit format itself (a real bug) fails at k = 4096.
TEST(GemmTcCheck, SixteenBitAccumulationFails) {
  for (GemmKind kind : {GemmKind::f16, GemmKind::bf16}) {
    const Kernel acc16 = [kind](const float* a, const float* b, int64_t k) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc = std::fma(a[p], b[p], acc);
        acc = kind == GemmKind::f16 ? __half2float(__float2half_rn(acc)) : __bfloat162float(__float2bfloat16_rn(acc));
      }
      return acc;
    };
    EXPECT_FALSE(simulate(kind, 4096, true, acc16).pass) << check::gemm_kind_name(kind);
  }
}

// tf32 inputs, rounded or truncated, fp32 sums: pass tf32; on zero-mean data they fail f32 (the
// bound is tight enough to catch a tf32 kernel passed off as fp32 -- on positive data the rounding
// errors average out and even fp32's tolerance lets round-to-nearest tf32 through, which is why
// the GPU tests use zero-mean data).
TEST(GemmTcCheck, Tf32InputsPassTf32NotF32) {
  for (bool truncate : {false, true}) {
    const Kernel tf = [truncate](const float* a, const float* b, int64_t k) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc = truncate ? std::fma(tf32_trunc(a[p]), tf32_trunc(b[p]), acc)
                       : std::fma(tf32_round(a[p]), tf32_round(b[p]), acc);
      return acc;
    };
    for (bool positive : {false, true}) {
      const auto e = simulate(GemmKind::tf32, 2048, positive, tf);
      EXPECT_TRUE(e.pass) << "truncate " << truncate << " positive " << positive << ": " << e.reason;
      if (!positive) {
        EXPECT_FALSE(simulate(GemmKind::f32, 2048, positive, tf).pass) << "truncate " << truncate;
      }
    }
  }
}

// A result too small for the normwise check's averaging (kNormwiseMinElements): one element whose
// terms cancel. a = 1 + 3 * 2^-13 rounds to 1 in tf32, so -1.25 ab + 0.5 * 2.5 is 0 on a tf32
// kernel against -3.75 * 2^-13 exactly: off by all of itself, but by 4.6e-4 against the tf32
// element-wise bound's (5u + 2^-9 + 2^-20) * 2.5 = 4.9e-3, so tf32 passes; fp32's 5u * 2.5 = 7.5e-7
// still catches it.
TEST(GemmTcCheck, OneCancellingElementIsJudgedElementWise) {
  check::GemmShape s;
  s.m = 1, s.n = 1, s.k = 1, s.alpha = -1.25f, s.beta = 0.5f;
  s = check::normalized(s);
  check::GemmData d = check::make_gemm_data(s, 1);
  d.A[0] = 1.0f + std::ldexp(3.0f, -13), d.B[0] = 1.0f, d.C0[0] = 2.5f;
  const check::GemmReference r = check::gemm_reference(s, d);
  ASSERT_DOUBLE_EQ(r.ref[0], -3.75 * std::ldexp(1.0, -13));
  const float c = s.alpha * tf32_round(d.A[0]) * tf32_round(d.B[0]) + s.beta * d.C0[0];
  ASSERT_EQ(c, 0.0f);
  const auto tf = check::compare_gemm(s, r, &c, GemmKind::tf32);
  EXPECT_TRUE(tf.pass) << tf.reason;
  EXPECT_DOUBLE_EQ(tf.normwise, 1.0);
  const auto f = check::compare_gemm(s, r, &c, GemmKind::f32);
  EXPECT_FALSE(f.pass);
  // The same element 32 times over (a 1 x 32 result) is judged normwise too, and fails it.
  check::GemmShape w = s;
  w.n = check::kNormwiseMinElements, w.lda = w.ldb = w.ldc = 0;
  w = check::normalized(w);
  check::GemmData dw = check::make_gemm_data(w, 1);
  for (int64_t j = 0; j < w.n; ++j) dw.B[j] = 1.0f, dw.C0[j] = 2.5f;
  dw.A[0] = d.A[0];
  const check::GemmReference rw = check::gemm_reference(w, dw);
  const std::vector<float> cw(static_cast<size_t>(w.ldc), 0.0f);
  const auto tw = check::compare_gemm(w, rw, cw.data(), GemmKind::tf32);
  EXPECT_FALSE(tw.pass);
  EXPECT_NE(tw.reason.find("normwise"), std::string::npos) << tw.reason;
}

// 3xTF32: x = big + small, products big*big + big*small + small*big exact (as on a tensor core).
// The tensor core's accumulation is modelled as round toward zero once per 4-deep step (the
// H100 measured an even larger bias: 7.1e-5 at k = 8192 on positive data, docs/gemm_tc.md).
//  * "fixed" (what rung 12 does since 6dbcff7): big*big of each 8-deep MMA into a fresh
//    accumulator, then one round-to-nearest fp32 add; the corrections accumulated on the tensor
//    core for a 32-deep slab, then added the same way: meets the fp32 tolerance.
//  * "naive": all three products accumulated on the tensor core over all of k: fails at k = 8192.
struct Split {
  float big, small;
  explicit Split(float x) : big(tf32_round(x)), small(tf32_round(x - tf32_round(x))) {}
};
// The tensor core: acc + sum of products over [p0, p1), truncated every 4 terms.
template <class Prod>
float tc_accumulate(float acc, int64_t p0, int64_t p1, Prod prod) {
  for (int64_t q = p0; q < p1; q += 4) {
    double s = acc;
    for (int64_t p = q; p < std::min(p1, q + 4); ++p) s += prod(p);
    acc = round_toward_zero(s);
  }
  return acc;
}

TEST(GemmTcCheck, Tf32x3NeedsRoundToNearestAccumulation) {
  const Kernel fixed = [](const float* a, const float* b, int64_t k) {
    float acc = 0;
    for (int64_t s0 = 0; s0 < k; s0 += 32) {
      const int64_t s1 = std::min<int64_t>(k, s0 + 32);
      const float corr = tc_accumulate(0.0f, s0, s1, [&](int64_t p) {
        const Split x(a[p]), y(b[p]);
        return static_cast<double>(x.big) * y.small + static_cast<double>(x.small) * y.big;
      });
      for (int64_t p0 = s0; p0 < s1; p0 += 8)
        acc += tc_accumulate(0.0f, p0, std::min(s1, p0 + 8), [&](int64_t p) {
          return static_cast<double>(Split(a[p]).big) * Split(b[p]).big;
        });
      acc += corr;
    }
    return acc;
  };
  const Kernel naive = [](const float* a, const float* b, int64_t k) {
    return tc_accumulate(0.0f, 0, k, [&](int64_t p) {
      const Split x(a[p]), y(b[p]);
      return static_cast<double>(x.big) * y.small + static_cast<double>(x.small) * y.big +
             static_cast<double>(x.big) * y.big;
    });
  };
  for (bool positive : {false, true}) {
    const auto e = simulate(GemmKind::tf32x3, 8192, positive, fixed);
    EXPECT_TRUE(e.pass) << "positive " << positive << ": " << e.reason;
    std::cout << (positive ? "positive" : "zero-mean") << " data, k = 8192, simulated tf32x3 normwise: fixed "
              << e.normwise << ", naive " << simulate(GemmKind::tf32x3, 8192, positive, naive).normwise << std::endl;
  }
  const auto bad = simulate(GemmKind::tf32x3, 8192, true, naive);
  EXPECT_FALSE(bad.pass) << "normwise " << bad.normwise;
}

}  // namespace
}  // namespace rungs::test
