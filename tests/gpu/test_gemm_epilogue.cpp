// gemm's epilogues (Options::epilogue: bias, activation, the gated product, beta * C; the fp8
// outputs with their block scales) through the public API, against check::epilogue_reference. The
// cases are `auto` and every rung whose VariantInfo says epilogue: a rung that gains one is tested
// without editing this file. Every case draws fresh data, poisons C (NaN; beta = 0 never reads it)
// and checks that C's ld padding still holds NaN afterwards.
#include <rungs/rungs.hpp>

#include "check/epilogue_check.hpp"
#include "check/gemm_check.hpp"
#include "gpu_env.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rungs::test {
namespace {

using check::GemmKind;

std::vector<std::string> epi_params() {
  std::vector<std::string> out{"auto"};
  for (const auto& v : variants(Op::gemm))
    if (v.epilogue) out.push_back(v.name);
  return out;
}

// The inputs' type (fp8: e4m3 x e4m3 with Scales) and C's: the input's own (bf16 for fp8), or e4m3
// with block scales.
enum class In { f32, f16, bf16, fp8 };
const char* in_name(In in) { return in == In::f32 ? "f32" : in == In::f16 ? "f16" : in == In::bf16 ? "bf16" : "fp8"; }

struct Case {
  In in = In::bf16;
  bool fp8_out = false;
  Activation act = Activation::none;
  bool gated = false, bias = false;
  float alpha = 1.0f, beta = 0.0f;
  Trans ta = Trans::N, tb = Trans::T;
  int64_t m = 67, n = 300, k = 160;
  int64_t ldc_pad = 3;  // ldc = n + ldc_pad (3: C's rows off 16 bytes, so no TMA stores)
  Scaling scaling = Scaling::tensor;
};

std::string describe(const Case& c) {
  std::ostringstream os;
  os << in_name(c.in) << (c.fp8_out ? " -> e4m3" : "") << " " << (c.ta == Trans::N ? "n" : "t")
     << (c.tb == Trans::N ? "n" : "t") << " " << c.m << "x" << c.n << "x" << c.k << " act "
     << check::activation_name(c.act) << (c.gated ? " gated" : "") << (c.bias ? " bias" : "") << " alpha "
     << c.alpha << " beta " << c.beta;
  return os.str();
}

// C's element format for rounding the bias and C0 to what the GPU holds.
GemmKind c_kind(const Case& c) {
  return c.in == In::f32 ? GemmKind::f32 : c.in == In::f16 ? GemmKind::f16 : GemmKind::bf16;
}

std::vector<float> rounded(std::vector<float> v, GemmKind kind) {
  if (kind == GemmKind::f16 || kind == GemmKind::bf16) v = check::from_16bit(check::to_16bit(v, kind), kind);
  return v;
}

struct Outcome {
  bool filtered = false, skipped = false;
  std::string skip_reason;
  check::EpiErrors err;
};

Outcome run_case(const std::string& variant, const Case& c, uint64_t seed) {
  Outcome o;
  const int64_t np = c.gated ? 2 * c.n : c.n, ldc = c.n + c.ldc_pad;
  if (exceeds_test_limit(static_cast<double>(c.m) * np * c.k)) return o.filtered = true, o;
  check::GemmShape ps;  // the product: m x np, beta 0
  ps.ta = c.ta, ps.tb = c.tb, ps.m = c.m, ps.n = np, ps.k = c.k, ps.alpha = c.alpha;
  ps = check::normalized(ps);
  // Inputs: the gemm's test data (fp8: quantized with scales), the reference of the product.
  check::GemmData d;
  check::Fp8Data f;
  if (c.in == In::fp8) {
    f = check::make_fp8_data(ps, check::Fp8Format::e4m3, check::Fp8Format::e4m3, c.scaling, true, seed);
    d = f.deq;
  } else {
    d = check::make_gemm_data(ps, seed);
    check::round_inputs(d, c.in == In::f32 ? GemmKind::f32 : c.in == In::f16 ? GemmKind::f16 : GemmKind::bf16);
  }
  const check::GemmReference p = check::gemm_reference(ps, d, 0, seed);
  // The bias (C's type, float for an fp8 output) and C0 (m rows of ldc, padding NaN).
  std::mt19937_64 rng(seed * 7919 + 1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const GemmKind ck = c_kind(c), bias_kind = c.fp8_out ? GemmKind::f32 : ck;
  std::vector<float> bias_f(c.bias ? np : 0), c0(static_cast<size_t>(c.m * ldc), NAN);
  for (auto& x : bias_f) x = u(rng);
  bias_f = rounded(bias_f, bias_kind);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) c0[i * ldc + j] = u(rng);
  c0 = rounded(c0, ck);
  const check::EpiTolerances tol = check::epilogue_tolerances(c.in == In::fp8 ? GemmKind::fp8 : ck, c.k, c.fp8_out);
  const std::vector<double> bias_d(bias_f.begin(), bias_f.end());
  const check::EpiReference r = check::epilogue_reference(p, c.n, c.gated, bias_d, c.act, c.fp8_out ? 0.0 : c.beta,
                                                          c0, ldc, tol.gamma_p, tol.eta_p, tol.uo, tol.eta_o);
  // Device buffers.
  const size_t in_elem = c.in == In::f32 ? 4 : c.in == In::fp8 ? 1 : 2;
  const size_t c_elem = c.fp8_out ? 1 : ck == GemmKind::f32 ? 4 : 2;
  Dev A(d.A.size() * in_elem), B(d.B.size() * in_elem), C(c0.size() * c_elem);
  Dev bias(bias_f.size() * (bias_kind == GemmKind::f32 ? 4 : 2));
  const int64_t blocks = (c.n + 127) / 128;
  Dev scales(static_cast<size_t>(c.m * blocks) * 4), SA(f.sa.size() * 4), SB(f.sb.size() * 4);
  if (c.in == In::fp8) {
    A.upload(f.A.data()), B.upload(f.B.data()), SA.upload(f.sa.data()), SB.upload(f.sb.data());
  } else if (c.in == In::f32) {
    A.upload(d.A.data()), B.upload(d.B.data());
  } else {
    A.upload(check::to_16bit(d.A, ck).data()), B.upload(check::to_16bit(d.B, ck).data());
  }
  if (bias_kind == GemmKind::f32) bias.upload(bias_f.data());
  else bias.upload(check::to_16bit(bias_f, bias_kind).data());
  C.poison(), scales.poison();
  if (c.beta != 0.0f && !c.fp8_out) {
    if (ck == GemmKind::f32) C.upload(c0.data());
    else C.upload(check::to_16bit(c0, ck).data());
  }
  Options opts;
  opts.variant = variant;
  opts.epilogue.bias = c.bias ? bias.as<void>() : nullptr;
  opts.epilogue.act = c.act, opts.epilogue.gated = c.gated;
  Scales sc;
  sc.a = SA.as<float>(), sc.b = SB.as<float>(), sc.kind = c.scaling;
  using bf = __nv_bfloat16;
  using e4 = __nv_fp8_e4m3;
  try {
    if (c.fp8_out && c.in == In::fp8)
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<e4>(), ps.lda, B.as<e4>(), ps.ldb, sc, C.as<e4>(), ldc,
           scales.as<float>(), opts);
    else if (c.fp8_out)
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<bf>(), ps.lda, B.as<bf>(), ps.ldb, C.as<e4>(), ldc,
           scales.as<float>(), opts);
    else if (c.in == In::fp8)
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<e4>(), ps.lda, B.as<e4>(), ps.ldb, sc, c.beta, C.as<bf>(), ldc,
           opts);
    else if (c.in == In::f32)
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<float>(), ps.lda, B.as<float>(), ps.ldb, c.beta, C.as<float>(),
           ldc, opts);
    else if (c.in == In::f16)
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<__half>(), ps.lda, B.as<__half>(), ps.ldb, c.beta,
           C.as<__half>(), ldc, opts);
    else
      gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.as<bf>(), ps.lda, B.as<bf>(), ps.ldb, c.beta, C.as<bf>(), ldc, opts);
  } catch (const Unsupported& e) {
    o.skipped = true, o.skip_reason = e.what();
    return o;
  }
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  // The padding of C (columns n .. ldc) must still hold the poison.
  auto padding_ok = [&](auto is_poison) {
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = c.n; j < ldc; ++j)
        if (!is_poison(i * ldc + j)) return false;
    return true;
  };
  if (c.fp8_out) {
    std::vector<uint8_t> got(c0.size());
    std::vector<float> s(static_cast<size_t>(c.m * blocks));
    C.download(got.data()), scales.download(s.data());
    o.err = check::compare_epilogue_fp8(r, got.data(), c.n, ldc, s.data());
    EXPECT_TRUE(padding_ok([&](int64_t i) { return got[i] == 0xFF; })) << describe(c) << ": wrote C's ld padding";
  } else {
    std::vector<float> got(c0.size());
    if (ck == GemmKind::f32) {
      C.download(got.data());
    } else {
      std::vector<uint16_t> raw(got.size());
      C.download(raw.data());
      got = check::from_16bit(raw, ck);
    }
    o.err = check::compare_epilogue(r, got.data(), c.n, ldc);
    EXPECT_TRUE(padding_ok([&](int64_t i) { return std::isnan(got[i]); })) << describe(c) << ": wrote C's ld padding";
  }
  record_ran("gemm", variant);
  return o;
}

class GemmEpilogue : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { RUNGS_REQUIRE_GPU(); }
  // Runs the cases, one failure message per bad case.
  void run_all(const std::vector<Case>& cases) {
    Tally t;
    uint64_t seed = 1000;
    for (const Case& c : cases) {
      const Outcome o = run_case(GetParam(), c, ++seed);
      if (!t.count(o)) continue;
      EXPECT_TRUE(o.err.pass()) << GetParam() << " " << describe(c) << ": " << o.err.bad << " bad, first "
                                << o.err.first;
    }
    RUNGS_FINISH(t);
  }
};

const Activation kActs[4] = {Activation::none, Activation::relu, Activation::gelu, Activation::silu};

// Every input type, every activation, gated or not, with and without bias, beta 0 and 1, at a shape
// whose n is no multiple of 128 (the last scale block partial) and m, k odd where the type allows.
TEST_P(GemmEpilogue, EveryTypeActivationGatedBiasBeta) {
  std::vector<Case> cases;
  for (In in : {In::f32, In::f16, In::bf16, In::fp8})
    for (Activation act : kActs)
      for (bool gated : {false, true})
        for (bool bias : {false, true})
          for (float beta : {0.0f, 1.0f}) {
            Case c;
            c.in = in, c.act = act, c.gated = gated, c.bias = bias, c.beta = beta;
            if (in != In::fp8) c.k = 157;  // fp8 nt: 16-byte rows
            cases.push_back(c);
          }
  run_all(cases);
}

TEST_P(GemmEpilogue, Fp8OutputFromBf16AndFp8) {
  std::vector<Case> cases;
  for (In in : {In::bf16, In::fp8})
    for (Activation act : kActs)
      for (bool gated : {false, true})
        for (bool bias : {false, true}) {
          Case c;
          c.in = in, c.fp8_out = true, c.act = act, c.gated = gated, c.bias = bias;
          cases.push_back(c);
        }
  // fp8 inputs with per-row and block scales over 2n columns of B.
  for (Scaling s : {Scaling::outer, Scaling::block128}) {
    Case c;
    c.in = In::fp8, c.fp8_out = true, c.act = Activation::silu, c.gated = true, c.bias = true, c.scaling = s;
    cases.push_back(c);
  }
  run_all(cases);
}

// Transposes (gated nn reads B as k x 2n, in place or from a copy), an empty product (k = 0 and alpha = 0: the epilogue of
// P = 0, act(bias) and the two biases' gated product) and a larger shape.
TEST_P(GemmEpilogue, TransposesEmptyProductAndLargerShapes) {
  std::vector<Case> cases;
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T}) {
      Case c;
      c.ta = ta, c.tb = tb, c.act = Activation::silu, c.gated = true, c.bias = true, c.beta = 1.0f, c.k = 131;
      cases.push_back(c);
    }
  // Gated nn with n a multiple of 64: the up half read in place (n = 300 above: from a copy).
  for (int64_t n : {320, 384}) {
    Case c;
    c.tb = Trans::N, c.n = n, c.act = Activation::silu, c.gated = true, c.bias = true, c.k = 96;
    cases.push_back(c);
  }
  for (float alpha : {1.0f, 0.0f}) {
    Case c;
    c.act = Activation::gelu, c.gated = true, c.bias = true, c.alpha = alpha, c.k = alpha == 0.0f ? 64 : 0;
    cases.push_back(c);
    c.fp8_out = true;
    cases.push_back(c);
  }
  Case big;
  big.m = 515, big.n = 1000, big.k = 768, big.act = Activation::silu, big.gated = true, big.bias = true;
  cases.push_back(big);
  big.fp8_out = true;
  cases.push_back(big);
  run_all(cases);
}

// C's rows on 16 bytes, so C goes out by TMA where the rung stores that way (n * 2 bytes a multiple
// of 16, or not: the last tile column then stores directly), and more tiles than the persistent
// rungs have blocks (2100 rows: 9 cluster rows of 2 x 128, 81 or more cluster tiles against the
// H200's 66 clusters), so a tile's epilogue also runs under the next tile's mainloop (rung 21); k of
// 1, 4, 6 and 9 k tiles against that epilogue's 16 steps a tile (8 gated): all of them, or the steps
// a short mainloop leaves, run after it. Then the same at sizes the sanitizers run, and beta != 0 with such rows.
TEST_P(GemmEpilogue, TmaStoredAndManyTilesABlock) {
  std::vector<Case> cases;
  auto add = [&](In in, Activation act, bool gated, bool bias, int64_t m, int64_t n, int64_t k, int64_t pad) {
    Case c;
    c.in = in, c.act = act, c.gated = gated, c.bias = bias, c.m = m, c.n = n, c.k = k, c.ldc_pad = pad;
    cases.push_back(c);
  };
  add(In::bf16, Activation::silu, false, true, 2100, 2056, 200, 8);
  add(In::f16, Activation::relu, false, false, 2100, 2056, 64, 8);
  add(In::bf16, Activation::gelu, true, true, 2100, 1100, 328, 4);
  add(In::bf16, Activation::silu, true, true, 2100, 1024, 520, 8);
  add(In::bf16, Activation::silu, false, true, 40, 296, 160, 8);
  add(In::f16, Activation::gelu, true, true, 40, 296, 160, 8);
  add(In::bf16, Activation::none, false, true, 300, 512, 96, 8);
  cases.back().beta = 1.0f;
  run_all(cases);
}

INSTANTIATE_TEST_SUITE_P(Rungs, GemmEpilogue, ::testing::ValuesIn(epi_params()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace rungs::test
