// Verification of gemm results against the fp64 CPU reference, shared by the tests and
// `rungs verify` / `rungs bench` (one definition of "correct" for the whole project).
#pragma once

#include <rungs/rungs.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::check {

// What a gemm computes in: the element type and, for float, the math mode. These are the
// names of `rungs bench gemm --dtype`: f32 (float, Math::fp32), tf32, tf32x3 (float inputs),
// f16 (__half), bf16 (__nv_bfloat16), fp8 (e4m3 x e4m3 operands with Scales, a bf16 C: the
// CLI's fp8; the tests call the fp8 functions below for the other formats and a float C).
enum class GemmKind { f32, tf32, tf32x3, f16, bf16, fp8 };
const char* gemm_kind_name(GemmKind kind);
GemmType gemm_type_of(GemmKind kind);  // f32 for the three float kinds
Math math_of(GemmKind kind);           // fp32 for f16, bf16 and fp8
bool is_16bit(GemmKind kind);          // f16 and bf16: A, B and C in that format
// The format of C: the kind itself, except fp8's bf16 C.
GemmKind c_kind(GemmKind kind);

struct GemmShape {
  Trans ta = Trans::N, tb = Trans::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0 = tight (the stored row length)
  float alpha = 1.0f, beta = 0.0f;
};

// The tight ld's filled in, and the stored sizes of A, B, C in elements.
GemmShape normalized(GemmShape s);
int64_t a_elems(const GemmShape& s);
int64_t b_elems(const GemmShape& s);
int64_t c_elems(const GemmShape& s);
// "1000x777x513 nt lda=.. ldb=.. ldc=.. alpha=.. beta=.." (normalized), for test and error messages.
std::string describe(const GemmShape& s);
// Elements of C's ld padding (columns n..ldc of the m stored rows, which held NaN before the call)
// that are no longer NaN: a rung that writes there is wrong.
int64_t padding_written(const GemmShape& s, const float* C);

// Host copies of the inputs in their stored layout (ld padding included).
// Values are uniform in [-1, 1] with |x| >= 2^-8 (random and never zero), C0 likewise;
// padding elements hold NaN so a rung that reads them poisons its output.
struct GemmData {
  std::vector<float> A, B, C0;
};
GemmData make_gemm_data(const GemmShape& s, uint64_t seed);
// For f16 / bf16: A, B and C0 rounded (to nearest) to that type in place, so the fp64 reference
// sees exactly the inputs the GPU gets. No-op for the float kinds (the rungs round tf32 inputs).
void round_inputs(GemmData& d, GemmKind kind);
// Host float <-> the 16-bit patterns of f16 / bf16 (round to nearest even; NaN stays NaN).
std::vector<uint16_t> to_16bit(const std::vector<float>& v, GemmKind kind);
std::vector<float> from_16bit(const std::vector<uint16_t>& v, GemmKind kind);

// The fp64 reference on a set of rows of C (all rows, or a random sample for large shapes):
// ref = alpha * op(A) op(B) + beta * C0, and mag = |alpha| |op(A)| |op(B)| + |beta| |C0|,
// the magnitude that bounds rounding error element by element.
struct GemmReference {
  std::vector<int64_t> rows;  // which rows of C, ascending
  std::vector<double> ref;    // rows.size() x n
  std::vector<double> mag;    // rows.size() x n
};
GemmReference gemm_reference(const GemmShape& s, const GemmData& d, int64_t max_rows = 0, uint64_t seed = 1);

// Error of a computed C (host copy, m rows of stride ldc) against the reference.
struct GemmErrors {
  double max_rel = 0;      // max |c - ref| / |ref| over elements with |ref| > 0 (article 003's metric)
  double mean_rel = 0;     // mean of the same
  double normwise = 0;     // ||C - ref||_F / ||ref||_F over the checked rows
  double bound_ratio = 0;  // max |c - ref| / (gamma_k * mag): <= 1 is inside the rigorous bound
  int64_t bad = 0;         // elements that are NaN/Inf where the reference is finite, or vice versa
  bool pass = false;
  std::string reason;      // why it failed (empty when it passed)
};

// Tolerances, derived in gemm_check.cpp: fp32 unit roundoff u = 2^-24.
//  * element-wise: |c - ref| <= (k + 2) * u * mag (a rigorous bound for any summation order);
//  * normwise: ||C - ref|| / ||ref|| <= 4 * u * sqrt(k + 2) (rounding errors of a dot product
//    add like a random walk; 7x headroom over a sequential sum's 0.3-0.6 u sqrt(k)).
// `looseness` multiplies both, for rungs documented to be looser (none in the fp32 ladder).
double elementwise_gamma(int64_t k);
double normwise_tolerance(int64_t k);
GemmErrors compare_gemm(const GemmShape& s, const GemmReference& r, const float* C, double looseness = 1.0);
// The tensor-core kinds (derived in gemm_check.cpp; uo = the output format's unit roundoff,
// 2^-11 for f16, 2^-8 for bf16):
//  * f16 / bf16 (exact inputs, fp32 accumulation, one rounding of the result to the format):
//    element-wise (k+4) u (1+uo) + uo; normwise uo + 4 u sqrt(k+2);
//  * tf32 (each input rounded to tf32, unit roundoff ut = 2^-11, or truncated, 2^-10): element-wise
//    (k+4) u + 2^-9 + 2^-20; normwise 2^-10 + 4 u sqrt(k+2) (observed ~3e-4 with rounding, ~7e-4 truncating);
//  * tf32x3 (the dropped small*small product and the rounding of the small parts: <= 12 u per
//    product): element-wise (k+16) u; normwise the fp32 tolerance, 4 u sqrt(k+2);
//  * fp8: fp8_elementwise_gamma / fp8_normwise_tolerance with a bf16 C (below).
double elementwise_gamma(int64_t k, GemmKind kind);
double normwise_tolerance(int64_t k, GemmKind kind);
// Half the spacing of the output format's subnormals: the absolute part of its rounding error.
double output_eta(GemmKind kind);
GemmErrors compare_gemm(const GemmShape& s, const GemmReference& r, const float* C, GemmKind kind);

// FP8 (the gemm overloads with __nv_fp8_e4m3 / __nv_fp8_e5m2 operands and Scales):
// test data as fp8 bytes and scales, and its dequantized values as float GemmData so that
// gemm_reference and the error metrics apply unchanged.
enum class Fp8Format { e4m3, e5m2 };
const char* fp8_format_name(Fp8Format f);
// Floats in each scale array for a shape (rungs.hpp's Scaling): tensor 1 / 1, outer m / n,
// block128 m * ceil(k/128) / ceil(n/128) * ceil(k/128).
int64_t fp8_scales_a(Scaling kind, int64_t m, int64_t k);
int64_t fp8_scales_b(Scaling kind, int64_t n, int64_t k);
// A and B: fp8 bytes in their stored layout, each value x = fp8(8 * draw) (|x| <= 8, few are 0),
// the ld padding 0x7F (NaN in both formats). sa, sb: scales 2^j (1 + i/16), j in [-3, 3],
// i in [0, 15], laid out as Scaling says: an fp8 value (<= 4 significant bits) times a scale
// (<= 5) is exact in float, and so is the product of two such (<= 18 bits), whatever order a rung
// multiplies in. deq: A and B dequantized (value x its scale, NaN in the padding), C0 as
// make_gemm_data's, rounded to bf16 when bf16_out (the GPU gets exactly those inputs).
struct Fp8Data {
  std::vector<uint8_t> A, B;
  std::vector<float> sa, sb;
  GemmData deq;
};
Fp8Data make_fp8_data(const GemmShape& s, Fp8Format fa, Fp8Format fb, Scaling kind, bool bf16_out, uint64_t seed);
// Dequantizes d.A / d.B into d.deq with scale arrays as given (make_fp8_data calls it with
// d.sa / d.sb; a test may pass a wrongly laid out copy to see what such a rung would compute).
void fp8_dequantize(const GemmShape& s, Fp8Format fa, Fp8Format fb, Scaling kind, const std::vector<float>& sa,
                    const std::vector<float>& sb, Fp8Data& d);
// Host fp8 byte -> float (exact).
float fp8_to_float(uint8_t byte, Fp8Format f);
// Tolerances of fp8 (derived in gemm_check.cpp; ua = 2^-7 element-wise and 2^-10 normwise, the
// tensor core's narrow accumulation promoted to fp32 at least every 128 products; uo = 2^-8 for a
// bf16 C, 0 for a float C):
//  * element-wise ((k+4) u + ua) (1+uo) + uo;  * normwise uo + 4 u sqrt(k+2) + 2^-10.
double fp8_elementwise_gamma(int64_t k, bool bf16_out);
double fp8_normwise_tolerance(int64_t k, bool bf16_out);
GemmErrors compare_gemm_fp8(const GemmShape& s, const GemmReference& r, const float* C, bool bf16_out);

// The element-by-element part of compare_gemm and compare_gemv: each computed value against its
// fp64 reference and magnitude (sum |a||b| + |beta c0|), accumulated into e (bad, max_rel,
// bound_ratio); finish() sets e.mean_rel and e.normwise and returns how many were beyond gamma * mag.
// The normwise check applies to results of at least this many elements (gemm_check.cpp says why).
inline constexpr int64_t kNormwiseMinElements = 32;

class ErrorTally {
 public:
  // An element passes when |got - ref| <= gamma * mag + eta (eta only where mag > 0: a result whose
  // every product is zero must be exactly zero).
  ErrorTally(GemmErrors& e, double gamma, double eta = 0) : e_(e), gamma_(gamma), eta_(eta) {}
  void add(double ref, double mag, double got);
  int64_t finish() const;
  // What eta adds to a normwise tolerance: eta sqrt(elements) / ||ref||.
  double normwise_eta() const;
  int64_t elements() const { return count_; }  // the finite elements added

 private:
  GemmErrors& e_;
  double gamma_, eta_;
  double err2_ = 0, ref2_ = 0, rel_sum_ = 0;
  int64_t rel_count_ = 0, over_bound_ = 0, count_ = 0;
};

}  // namespace rungs::check
