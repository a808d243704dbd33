// The fp8 gemm without a GPU: the argument checks that come before any device call (math, shape,
// scale kind, null scales, the variant and its fp8 entry), the registry's "fp8" type, the `auto`
// choice for fp8, and the fp8 test data and tolerances of check/gemm_check (including that a
// result computed with wrongly laid out block scales fails the comparison).
#include <rungs/rungs.hpp>

#include "api_errors.hpp"
#include "check/gemm_check.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/tuning.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace rungs::test {
namespace {

using check::Fp8Format;
using E4 = __nv_fp8_e4m3;
using E5 = __nv_fp8_e5m2;
using BF = __nv_bfloat16;

Scales scales(const float* a, const float* b, Scaling kind = Scaling::tensor) {
  Scales s;
  s.a = a, s.b = b, s.kind = kind;
  return s;
}

// A 4x4x4 e4m3 x e4m3 -> bf16 call.
std::string call(const Scales& sc, const Options& o, int64_t m = 4, int64_t n = 4, int64_t k = 4, float alpha = 1) {
  return error_of([&] { gemm(Trans::N, Trans::N, m, n, k, alpha, fake<E4>(), 4, fake<E4>(), 4, sc, 0, fake<BF>(), 4, o); });
}

TEST(GemmFp8Args, MathMustBeFp32) {
  for (Math m : {Math::tf32, Math::tf32x3}) {
    Options o = named("cublas");
    o.math = m;
    const std::string e = call(scales(fake<float>(), fake<float>()), o);
    EXPECT_NE(e.find(std::string("opts.math = ") + (m == Math::tf32 ? "tf32" : "tf32x3") + " for fp8"),
              std::string::npos)
        << e;
    EXPECT_EQ(e.find("UNSUPPORTED"), std::string::npos) << e;
  }
}

TEST(GemmFp8Args, ShapeChecksAsForTheOtherTypes) {
  const Options o = named("cublas");
  const Scales sc = scales(fake<float>(), fake<float>());
  auto m = error_of([&] { gemm(Trans::N, Trans::N, -1, 4, 4, 1, fake<E4>(), 4, fake<E5>(), 4, sc, 0, fake<float>(), 4, o); });
  EXPECT_NE(m.find("m = -1"), std::string::npos) << m;
  auto a = error_of([&] { gemm(Trans::N, Trans::N, 5, 6, 7, 1, fake<E5>(), 6, fake<E4>(), 6, sc, 0, fake<BF>(), 6, o); });
  EXPECT_NE(a.find("lda = 6"), std::string::npos) << a;
  auto b = error_of([&] { gemm(Trans::N, Trans::T, 5, 6, 7, 1, fake<E5>(), 7, fake<E5>(), 6, sc, 0, fake<BF>(), 6, o); });
  EXPECT_NE(b.find("ldb = 6"), std::string::npos) << b;
}

TEST(GemmFp8Args, ScaleKindMustBeValid) {
  const std::string e = call(scales(fake<float>(), fake<float>(), static_cast<Scaling>(7)), named("cublas"));
  EXPECT_NE(e.find("scales.kind = 7"), std::string::npos) << e;
}

// A null scale is named, whatever the variant (the check comes before the lookup), on each of the
// eight overloads.
TEST(GemmFp8Args, NullScalesAreNamedOnEveryOverload) {
  const Options o = named("cublas");
  const Scales na = scales(nullptr, fake<float>()), nb = scales(fake<float>(), nullptr);
  const std::vector<std::function<void(const Scales&)>> calls = {
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E4>(), 4, fake<E4>(), 4, s, 0, fake<BF>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E4>(), 4, fake<E4>(), 4, s, 0, fake<float>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E4>(), 4, fake<E5>(), 4, s, 0, fake<BF>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E4>(), 4, fake<E5>(), 4, s, 0, fake<float>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E5>(), 4, fake<E4>(), 4, s, 0, fake<BF>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E5>(), 4, fake<E4>(), 4, s, 0, fake<float>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E5>(), 4, fake<E5>(), 4, s, 0, fake<BF>(), 4, o); },
      [&](const Scales& s) { gemm(Trans::N, Trans::N, 4, 4, 4, 1, fake<E5>(), 4, fake<E5>(), 4, s, 0, fake<float>(), 4, o); },
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string a = error_of([&] { calls[i](na); });
    EXPECT_NE(a.find("scales.a = nullptr"), std::string::npos) << "overload " << i << ": " << a;
    const std::string b = error_of([&] { calls[i](nb); });
    EXPECT_NE(b.find("scales.b = nullptr"), std::string::npos) << "overload " << i << ": " << b;
  }
  // Before the variant lookup: an unknown name still reports the null scale first.
  const std::string u = call(na, named("fastest"));
  EXPECT_NE(u.find("scales.a = nullptr"), std::string::npos) << u;
}

// Where the scales are not read (m, n or k zero, alpha zero) they may be null, as A and B may:
// what comes next is the rung's answer (naive, a CUDA-core rung, never does fp8).
TEST(GemmFp8Args, NullScalesWhereNothingIsRead) {
  const Scales none = scales(nullptr, nullptr);
  const std::string want = "UNSUPPORTED naive: does not do fp8 inputs";
  EXPECT_EQ(want, call(none, named("naive"), 4, 4, 0));
  EXPECT_EQ(want, call(none, named("naive"), 4, 4, 4, 0.0f));
  EXPECT_EQ(want, call(none, named("naive"), 0, 4, 4));
}

TEST(GemmFp8Args, RungWithoutFp8EntryIsUnsupportedAndUnknownNameAnError) {
  const Scales sc = scales(fake<float>(), fake<float>());
  EXPECT_EQ("UNSUPPORTED naive: does not do fp8 inputs", call(sc, named("naive")));
  EXPECT_EQ("UNSUPPORTED warptile: does not do fp8 inputs", call(sc, named("warptile")));
  const std::string e = call(sc, named("fastest"));
  EXPECT_NE(e.find("unknown variant \"fastest\""), std::string::npos) << e;
  EXPECT_EQ(e.find("UNSUPPORTED"), std::string::npos) << e;
}

// m == 0 or n == 0 is a no-op with every pointer null, on a rung that does fp8 (none without one).
TEST(GemmFp8Args, EmptyCIsANoOp) {
  std::string rung;
  for (const auto& v : variants(Op::gemm))
    if ((" " + v.types + " ").find(" fp8 ") != std::string::npos) rung = v.name;
  if (rung.empty()) GTEST_SKIP() << "no rung does fp8 (no fp8 entry in the ladder)";
  const Options o = named(rung.c_str());
  EXPECT_EQ("", error_of([&] {
              gemm(Trans::N, Trans::N, 0, 3, 3, 1, static_cast<E4*>(nullptr), 3, static_cast<E4*>(nullptr), 3,
                   scales(nullptr, nullptr), 0, static_cast<BF*>(nullptr), 3, o);
            }));
}

// "fp8" in a rung's types exactly where its fp8 entry is set.
TEST(GemmFp8Registry, TypesSayFp8WhereTheEntryIsSet) {
  const auto infos = variants(Op::gemm);
  const auto& ladder = sgemm::ladder();
  ASSERT_EQ(infos.size(), ladder.size());
  for (size_t i = 0; i < ladder.size(); ++i) {
    const bool says = (" " + infos[i].types + " ").find(" fp8 ") != std::string::npos;
    EXPECT_EQ(says, ladder[i].fp8 != nullptr) << ladder[i].name << ": \"" << infos[i].types << "\"";
  }
}

// auto for fp8 names the cublas rung (cuBLASLt) on every device, whatever the shape or what the
// f16/bf16 rules would say, except on Hopper (sm_90a builds): decode shapes with outer or block128
// scales (nt, aligned rows, m <= 64, n >= 7168, n k >= 2^25) run rung 31 (decode_fp8), or on the
// H200 rung 34 (decode_fp8_wide) for outer scales at 16 <= m <= 64 and block128 at 16 < m <= 64 on
// a long, narrow W, and the forms cuBLASLt does not run (other transposes than nt, unaligned rows)
// rung 29.
TEST(GemmFp8Auto, CublasExceptDecodeAndFormsCublasLacks) {
#if defined(RUNGS_HAVE_SM90A)
  const std::string decode = "decode_fp8", wide = "decode_fp8_wide", other_forms = "wgmma_fp8_promote";
#else
  const std::string decode = "cublas", wide = "cublas", other_forms = "cublas";
#endif
  for (int sm : {70, 80, 89, 90})
    for (bool aligned : {true, false})
      for (int64_t mnk : {int64_t{64}, int64_t{8192}})
        for (Scaling sc : {Scaling::tensor, Scaling::outer, Scaling::block128}) {
          EXPECT_EQ(sm == 90 ? other_forms : "cublas",
                    sgemm::auto_variant(Trans::N, Trans::N, mnk, mnk, mnk, sm, GemmType::fp8, Math::fp32, aligned, sc))
              << "sm_" << sm << " " << mnk << (aligned ? " aligned" : " unaligned");
          EXPECT_EQ(sm == 90 && !aligned ? other_forms : "cublas",
                    sgemm::auto_variant(Trans::N, Trans::T, mnk, mnk, mnk, sm, GemmType::fp8, Math::fp32, aligned, sc))
              << "sm_" << sm << " " << mnk << (aligned ? " aligned" : " unaligned");
        }
  EXPECT_EQ(other_forms, sgemm::auto_variant(Trans::T, Trans::N, 4095, 4097, 4093, 90, GemmType::fp8, Math::fp32, false));
  EXPECT_EQ(other_forms, sgemm::auto_variant(Trans::T, Trans::T, 4096, 4096, 4096, 90, GemmType::fp8, Math::fp32, true));
  for (Scaling sc : {Scaling::outer, Scaling::block128})
    for (int64_t m : {int64_t{1}, int64_t{16}, int64_t{64}})
      for (int64_t n : {int64_t{7168}, int64_t{28672}})
        EXPECT_EQ(decode, sgemm::auto_variant(Trans::N, Trans::T, m, n, 8192, 90, GemmType::fp8, Math::fp32, true, sc))
            << m << " x " << n;
  const auto at = [](Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, bool aligned, Scaling sc) {
    return sgemm::auto_variant(ta, tb, m, n, k, 90, GemmType::fp8, Math::fp32, aligned, sc);
  };
  EXPECT_EQ("cublas", at(Trans::N, Trans::T, 128, 28672, 8192, true, Scaling::outer));   // m = 128: cuBLASLt
  EXPECT_EQ("cublas", at(Trans::N, Trans::T, 16, 28672, 8192, true, Scaling::tensor));   // tensor: cuBLASLt
  EXPECT_EQ("cublas", at(Trans::N, Trans::T, 128, 7168, 8192, true, Scaling::block128)); // m = 128: cuBLASLt
  EXPECT_EQ(other_forms, at(Trans::N, Trans::N, 16, 28672, 8192, true, Scaling::outer));  // nn
  EXPECT_EQ(other_forms, at(Trans::N, Trans::T, 16, 28672, 8192, false, Scaling::outer)); // unaligned rows
  EXPECT_EQ("cublas", at(Trans::N, Trans::T, 16, 4096, 16384, true, Scaling::outer));    // n < 7168
  EXPECT_EQ("cublas", at(Trans::N, Trans::T, 16, 7168, 1024, true, Scaling::outer));     // W below 2^25
  EXPECT_EQ("cublas", sgemm::auto_variant(Trans::N, Trans::T, 16, 28672, 8192, 89, GemmType::fp8, Math::fp32, true,
                                          Scaling::outer));  // not Hopper
  // More than 4 TB/s of DRAM on paper (H200): with n >= 16384 and n >= 2k, outer at 16 <= m <= 64
  // and block128 at 16 < m <= 64 run rung 34; block128 at m > 16 with n k >= 2^27 on another W stays
  // on cuBLASLt; outer below m = 16, block128 at m <= 16 and the shorter W keep rung 31. 3352 GB/s
  // (H100) keeps rung 31 everywhere.
  const auto on = [](double gbs, int64_t m, int64_t n, Scaling sc) {
    return sgemm::auto_variant(Trans::N, Trans::T, m, n, 8192, 90, GemmType::fp8, Math::fp32, true, sc, gbs);
  };
  for (int64_t m : {int64_t{17}, int64_t{32}, int64_t{64}}) {
    EXPECT_EQ(wide, on(4814.0, m, 28672, Scaling::block128)) << m;
    EXPECT_EQ("cublas", sgemm::auto_variant(Trans::N, Trans::T, m, 8192, 28672, 90, GemmType::fp8, Math::fp32, true,
                                            Scaling::block128, 4814.0))
        << m;  // n < 2k
    EXPECT_EQ(decode, on(3352.0, m, 28672, Scaling::block128)) << m;
    EXPECT_EQ(decode, on(4814.0, m, 7168, Scaling::block128)) << m;
    EXPECT_EQ(wide, on(4814.0, m, 28672, Scaling::outer)) << m;
    EXPECT_EQ(decode, on(3352.0, m, 28672, Scaling::outer)) << m;
    EXPECT_EQ(decode, on(4814.0, m, 7168, Scaling::outer)) << m;
  }
  EXPECT_EQ(decode, on(4814.0, 16, 28672, Scaling::block128));
  EXPECT_EQ(wide, on(4814.0, 16, 28672, Scaling::outer));
  EXPECT_EQ(decode, on(4814.0, 15, 28672, Scaling::outer));
  EXPECT_EQ(decode, on(4814.0, 1, 28672, Scaling::outer));
  EXPECT_EQ(decode, sgemm::auto_variant(Trans::N, Trans::T, 64, 16384, 16384, 90, GemmType::fp8, Math::fp32, true,
                                        Scaling::outer, 4814.0));  // n < 2k
  // H200: past m = 64 rung 31 on a W under 2^27 elements (7168 x 8192), both scalings; cuBLASLt on
  // 28672 x 8192, on the H100 and past m = 128.
  for (Scaling sc : {Scaling::outer, Scaling::block128}) {
    for (int64_t m : {int64_t{65}, int64_t{96}, int64_t{128}}) {
      EXPECT_EQ(decode, on(4814.0, m, 7168, sc)) << m;
      EXPECT_EQ("cublas", on(4814.0, m, 28672, sc)) << m;
      EXPECT_EQ("cublas", on(3352.0, m, 7168, sc)) << m;
    }
    EXPECT_EQ("cublas", on(4814.0, 129, 7168, sc));
  }
  EXPECT_EQ("cublas", on(4814.0, 128, 7168, Scaling::tensor));
}

// The data: fp8 bytes, scales of few bits, the dequantized values exact products.
TEST(GemmFp8Check, DataIsExactAndLaidOut) {
  check::GemmShape s;
  s.ta = Trans::T, s.tb = Trans::N, s.m = 70, s.n = 300, s.k = 200, s.lda = 75, s.ldb = 301;
  for (Scaling kind : {Scaling::tensor, Scaling::outer, Scaling::block128}) {
    const check::Fp8Data d = check::make_fp8_data(s, Fp8Format::e5m2, Fp8Format::e4m3, kind, true, 7);
    EXPECT_EQ(static_cast<int64_t>(d.sa.size()), check::fp8_scales_a(kind, 70, 200));
    EXPECT_EQ(static_cast<int64_t>(d.sb.size()), check::fp8_scales_b(kind, 300, 200));
    EXPECT_EQ(d.A.size(), static_cast<size_t>(200 * 75));
    EXPECT_EQ(d.B.size(), static_cast<size_t>(200 * 301));
    for (float x : d.sa) {
      int e = 0;
      const float f = std::frexp(x, &e) * 32.0f;  // 2^j (1 + i/16): 5 significant bits
      EXPECT_EQ(f, std::floor(f)) << x;
      EXPECT_GE(x, 0.125f);
      EXPECT_LT(x, 16.0f);
    }
    // A's stored element (r, c) (ta = T: op(A)(c, r)) is its fp8 value times its scale.
    const int64_t r = 130, c = 69;  // op(A) row 69, k index 130: block 1
    const float v = check::fp8_to_float(d.A[r * 75 + c], Fp8Format::e5m2);
    const float sc = kind == Scaling::tensor ? d.sa[0] : kind == Scaling::outer ? d.sa[69] : d.sa[69 * 2 + 1];
    EXPECT_EQ(d.deq.A[r * 75 + c], v * sc);
    EXPECT_LE(std::fabs(v), 8.0f);
    EXPECT_TRUE(std::isnan(d.deq.A[r * 75 + 70])) << "padding";
    EXPECT_TRUE(std::isnan(check::fp8_to_float(d.A[r * 75 + 70], Fp8Format::e5m2))) << "padding byte";
    // B (tb = N): element (p, j) = (150, 290), block (2, 1) of ceil(n/128) x ceil(k/128) = 3 x 2.
    const float w = check::fp8_to_float(d.B[150 * 301 + 290], Fp8Format::e4m3);
    const float sbv = kind == Scaling::tensor ? d.sb[0] : kind == Scaling::outer ? d.sb[290] : d.sb[2 * 2 + 1];
    EXPECT_EQ(d.deq.B[150 * 301 + 290], w * sbv);
    // C0 is bf16-exact for a bf16 C.
    const float c0 = d.deq.C0[5];
    EXPECT_EQ(c0, __bfloat162float(__float2bfloat16_rn(c0)));
  }
}

// The result with block scales read transposed fails; the exact result rounded to bf16 passes.
TEST(GemmFp8Check, WrongBlockScaleLayoutFailsTheComparison) {
  check::GemmShape s;
  s.m = 70, s.n = 300, s.k = 300;
  s = check::normalized(s);
  const check::Fp8Data d = check::make_fp8_data(s, Fp8Format::e4m3, Fp8Format::e4m3, Scaling::block128, true, 11);
  const check::GemmReference ref = check::gemm_reference(s, d.deq);
  std::vector<float> exact(static_cast<size_t>(s.m * s.ldc));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j)
      exact[i * s.ldc + j] = __bfloat162float(__float2bfloat16_rn(static_cast<float>(ref.ref[i * s.n + j])));
  const check::GemmErrors ok = check::compare_gemm_fp8(s, ref, exact.data(), true);
  EXPECT_TRUE(ok.pass) << ok.reason;
  for (bool wrong_a : {true, false}) {
    const int64_t kb = 3, nb = 3;
    std::vector<float> sa = d.sa, sb = d.sb;
    if (wrong_a) {  // read as m x kb, stored kb x m
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t p = 0; p < kb; ++p) sa[p * s.m + i] = d.sa[i * kb + p];
    } else {
      for (int64_t j = 0; j < nb; ++j)
        for (int64_t p = 0; p < kb; ++p) sb[p * nb + j] = d.sb[j * kb + p];
    }
    check::Fp8Data w = d;
    check::fp8_dequantize(s, Fp8Format::e4m3, Fp8Format::e4m3, Scaling::block128, sa, sb, w);
    const check::GemmReference bad = check::gemm_reference(s, w.deq);
    std::vector<float> got(static_cast<size_t>(s.m * s.ldc));
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) got[i * s.ldc + j] = static_cast<float>(bad.ref[i * s.n + j]);
    for (bool bf16_out : {true, false}) {
      const check::GemmErrors e = check::compare_gemm_fp8(s, ref, got.data(), bf16_out);
      EXPECT_FALSE(e.pass) << (wrong_a ? "A" : "B") << " scales transposed: normwise " << e.normwise;
    }
  }
}

// The tolerances as stated: fp32 gamma + 2^-7 element-wise, + 2^-10 normwise, bf16's uo on top.
TEST(GemmFp8Check, TolerancesAsDerived) {
  const double u = std::ldexp(1.0, -24), uo = std::ldexp(1.0, -8);
  EXPECT_DOUBLE_EQ(check::fp8_elementwise_gamma(100, false), 104 * u + std::ldexp(1.0, -7));
  EXPECT_DOUBLE_EQ(check::fp8_elementwise_gamma(100, true), (104 * u + std::ldexp(1.0, -7)) * (1 + uo) + uo);
  EXPECT_DOUBLE_EQ(check::fp8_normwise_tolerance(98, false), 4 * u * 10 + std::ldexp(1.0, -10));
  EXPECT_DOUBLE_EQ(check::fp8_normwise_tolerance(98, true), 4 * u * 10 + std::ldexp(1.0, -10) + uo);
}

}  // namespace
}  // namespace rungs::test
