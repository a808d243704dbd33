// Verification of gemm's epilogues (rungs.hpp, Epilogue; the fp8 output) against fp64: the
// epilogue applied in double to the product's fp64 reference, with a bound per element carried
// through from the product's (gemm_check.hpp) so that every rung's one definition of "correct"
// holds for the epilogue too.
#pragma once

#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::check {

// act(x) in double (gelu: the tanh approximation).
double activate_ref(double x, Activation act);
const char* activation_name(Activation act);  // "none", "relu", "gelu", "silu"

// The epilogue's fp64 reference on the rows of the product's reference p (the product: m x np with
// beta = 0, np = 2n when gated): E = act(P + bias) (times P[:, n:] + bias[n:] when gated), and
// ref = E + beta * C0 (C0: m rows of stride ldc; beta = 0 reads none). bias: np values, or empty.
// bound: each element's error bound: the product's own, gamma_p * mag + eta_p (P rounded to its
// format included), carried through the bias's fp32 add, the activation (slope at most 1.13: gelu's
// largest, silu's 1.10, relu's 1) and the gated product (|a| e_u + |u| e_a + e_a e_u), then fp32's
// and the output format's rounding (uo |ref| + eta_o) and beta * C0's fp32 product.
// The tolerances epilogue_reference takes for a product of `kind` (fp8: e4m3 operands, the product
// in bf16 as the unfused chain keeps it) over k: gamma_p and eta_p, the product's element-wise
// bound with its rounding to C's format (gemm_check.hpp); uo and eta_o, the output's rounding (none
// for float, and for an fp8 output, whose rounding compare_epilogue_fp8 bounds).
struct EpiTolerances {
  double gamma_p, eta_p, uo, eta_o;
};
EpiTolerances epilogue_tolerances(GemmKind kind, int64_t k, bool fp8_out);

struct EpiReference {
  std::vector<int64_t> rows;
  std::vector<double> e, ref, bound;  // rows.size() x n each; e without beta * C0
};
EpiReference epilogue_reference(const GemmReference& p, int64_t n, bool gated, const std::vector<double>& bias,
                                Activation act, double beta, const std::vector<float>& C0, int64_t ldc,
                                double gamma_p, double eta_p, double uo, double eta_o);

// Computed C (m rows of stride ldc, as floats) against the reference: elements beyond their bound,
// NaN or Inf where the reference is finite, the largest error relative to the bound.
struct EpiErrors {
  int64_t bad = 0;
  double max_ratio = 0;  // max |c - ref| / bound
  std::string first;     // the first bad element, for the message
  bool pass() const { return bad == 0; }
};
EpiErrors compare_epilogue(const EpiReference& r, const float* C, int64_t n, int64_t ldc);

// An fp8 output (e4m3 C and its m x ceil(n/128) block scales): each scale within 1 % of the fp64
// block's max |E| / 448 (plus the block's largest bound / 448; exactly 1 for an all-zero block), and
// each element dequantized, C s, within e4m3's rounding of E: |C s - E| <= bound + 2^-4 (|E| + bound)
// + s 2^-10 (half a unit of the last place, normal and subnormal).
EpiErrors compare_epilogue_fp8(const EpiReference& r, const uint8_t* C, int64_t n, int64_t ldc, const float* scales);

}  // namespace rungs::check
