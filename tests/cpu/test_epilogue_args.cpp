// Argument checking of gemm's epilogues (Options::epilogue, the fp8 outputs), all before any GPU
// work, and the epilogue's fp64 reference (check/epilogue_check.hpp).
#include <rungs/rungs.hpp>

#include "api_errors.hpp"
#include "check/epilogue_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace rungs::test {
namespace {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

Options with(const char* variant, Epilogue e) {
  Options o = named(variant);
  o.epilogue = e;
  return o;
}
Epilogue gated_silu() {
  Epilogue e;
  e.act = Activation::silu, e.gated = true;
  return e;
}

TEST(EpilogueArgs, ActivationOutOfRangeIsNamed) {
  Epilogue e;
  e.act = static_cast<Activation>(7);
  const auto m = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 4, 4, 1, fake<bf16>(), 4, fake<bf16>(), 4, 0, fake<bf16>(), 4, with("auto", e));
  });
  EXPECT_NE(m.find("opts.epilogue.act = 7"), std::string::npos) << m;
}

TEST(EpilogueArgs, GatedChecksLdbAgainstTwoN) {
  // tb = N: B is k x 2n, so ldb >= 2n = 10; 9 is refused, naming gated.
  const auto m = error_of([&] {
    gemm(Trans::N, Trans::N, 4, 5, 3, 1, fake<bf16>(), 3, fake<bf16>(), 9, 0, fake<bf16>(), 5,
         with("auto", gated_silu()));
  });
  EXPECT_NE(m.find("ldb = 9"), std::string::npos) << m;
  EXPECT_NE(m.find("gated"), std::string::npos) << m;
  // tb = T: B is stored 2n x k, ldb >= k as without gated; ldc >= n (C is m x n).
  EXPECT_EQ("", error_of([&] {
              gemm(Trans::N, Trans::T, 0, 5, 3, 1, fake<bf16>(), 3, fake<bf16>(), 3, 0, fake<bf16>(), 5,
                   with("auto", gated_silu()));
            }));
  const auto c = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 5, 3, 1, fake<bf16>(), 3, fake<bf16>(), 3, 0, fake<bf16>(), 4,
         with("auto", gated_silu()));
  });
  EXPECT_NE(c.find("ldc = 4"), std::string::npos) << c;
}

TEST(EpilogueArgs, Fp8OutputNeedsBetaZeroAndScales) {
  // The fp8-output overloads take no beta: the bf16 one with null c_scales.
  const auto s = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 4, 16, 1, fake<bf16>(), 16, fake<bf16>(), 16, fake<e4m3>(), 4, nullptr, named("auto"));
  });
  EXPECT_NE(s.find("c_scales = nullptr"), std::string::npos) << s;
  Scales sc;
  sc.a = fake<float>(), sc.b = fake<float>();
  const auto f = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 4, 16, 1, fake<e4m3>(), 16, fake<e4m3>(), 16, sc, fake<e4m3>(), 4, nullptr,
         named("auto"));
  });
  EXPECT_NE(f.find("c_scales = nullptr"), std::string::npos) << f;
  // An empty output needs no scales.
  EXPECT_EQ("", error_of([&] {
              gemm(Trans::N, Trans::T, 0, 4, 16, 1, fake<bf16>(), 16, fake<bf16>(), 16, fake<e4m3>(), 4, nullptr,
                   named("auto"));
            }));
}

TEST(EpilogueArgs, BiasMisalignedForItsTypeIsNamed) {
  Epilogue e;
  e.bias = reinterpret_cast<const void*>(0x1001);  // not aligned to bf16's 2 bytes
  const auto m = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 4, 4, 1, fake<bf16>(), 4, fake<bf16>(), 4, 0, fake<bf16>(), 4, with("auto", e));
  });
  EXPECT_NE(m.find("opts.epilogue.bias"), std::string::npos) << m;
  // A float bias (an fp8 output) needs 4 bytes.
  e.bias = reinterpret_cast<const void*>(0x1002);
  const auto f = error_of([&] {
    gemm(Trans::N, Trans::T, 4, 4, 16, 1, fake<bf16>(), 16, fake<bf16>(), 16, fake<e4m3>(), 4, fake<float>(),
         with("auto", e));
  });
  EXPECT_NE(f.find("opts.epilogue.bias"), std::string::npos) << f;
  EXPECT_NE(f.find("aligned to 4 bytes"), std::string::npos) << f;
}

TEST(EpilogueArgs, RungsWithoutAnEpilogueAreUnsupportedNamedOnesThatHaveOneAreNot) {
  Epilogue e;
  e.act = Activation::relu;
  for (const auto& v : variants(Op::gemm)) {
    const auto m = error_of([&] {
      gemm(Trans::N, Trans::T, 0, 4, 4, 1, fake<bf16>(), 4, fake<bf16>(), 4, 0, fake<bf16>(), 4,
           with(v.name.c_str(), e));
    });
    if (v.epilogue)
      EXPECT_EQ(m, "") << v.name;
    else
      EXPECT_NE(m.find("UNSUPPORTED " + v.name + ": does not apply epilogues"), std::string::npos) << m;
  }
  // The vendor baseline applies them (the unfused chain), and auto resolves to a rung that does.
  bool any = false;
  for (const auto& v : variants(Op::gemm)) any = any || (v.epilogue && v.baseline);
  EXPECT_TRUE(any);
  Options o;
  o.epilogue = e;
  const std::string r = resolve_gemm_variant(Trans::N, Trans::T, 64, 64, 64, o, GemmType::bf16);
  bool resolved_applies = false;
  for (const auto& v : variants(Op::gemm)) resolved_applies = resolved_applies || (v.name == r && v.epilogue);
  EXPECT_TRUE(resolved_applies) << r;
}

TEST(EpilogueArgs, OtherEntryPointsRefuseAnEpilogue) {
  Epilogue e;
  e.gated = true;
  const Options o = with("auto", e);
  const auto g = error_of([&] { gemv(Trans::N, 4, 4, 1, fake(), 4, fake(), 1, 0, fake(), 1, o); });
  EXPECT_NE(g.find("rungs::gemv: invalid argument opts.epilogue"), std::string::npos) << g;
  const auto r = error_of([&] { reduce_sum(fake<const float>(), 4, fake(), o); });
  EXPECT_NE(r.find("rungs::reduce_sum: invalid argument opts.epilogue"), std::string::npos) << r;
  std::vector<float> h(16);
  const auto hm = error_of([&] { gemm_host(Trans::N, Trans::N, 4, 4, 4, 1, h.data(), 4, h.data(), 4, 0, h.data(), 4, o); });
  EXPECT_NE(hm.find("rungs::gemm_host: invalid argument opts.epilogue"), std::string::npos) << hm;
}

TEST(EpilogueReference, ActivationsAndTheGatedProduct) {
  EXPECT_EQ(check::activate_ref(-2.0, Activation::relu), 0.0);
  EXPECT_EQ(check::activate_ref(3.0, Activation::relu), 3.0);
  EXPECT_NEAR(check::activate_ref(1.0, Activation::silu), 1.0 / (1.0 + std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(check::activate_ref(1.0, Activation::gelu), 0.8411919906082768, 1e-12);  // torch, approximate="tanh"
  // One row, n = 2, gated: P = [g0 g1 u0 u1] with bias [b0 b1 c0 c1].
  check::GemmReference p;
  p.rows = {0};
  p.ref = {1.0, -1.0, 2.0, 3.0};
  p.mag = {1.0, 1.0, 2.0, 3.0};
  const std::vector<double> bias{0.5, 0.25, -1.0, 1.0};
  const auto r = check::epilogue_reference(p, 2, true, bias, Activation::silu, 0.0, {}, 2, 1e-6, 0, 0, 0);
  ASSERT_EQ(r.ref.size(), 2u);
  EXPECT_NEAR(r.ref[0], check::activate_ref(1.5, Activation::silu) * 1.0, 1e-15);
  EXPECT_NEAR(r.ref[1], check::activate_ref(-0.75, Activation::silu) * 4.0, 1e-15);
  // A result off by more than the bound fails; within it, passes.
  std::vector<float> c{static_cast<float>(r.ref[0]), static_cast<float>(r.ref[1] + 10 * r.bound[1])};
  const auto e = check::compare_epilogue(r, c.data(), 2, 2);
  EXPECT_EQ(e.bad, 1);
  EXPECT_NE(e.first.find("C[0][1]"), std::string::npos) << e.first;
}

}  // namespace
}  // namespace rungs::test
