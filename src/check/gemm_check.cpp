// One definition of "correct" for gemm: the data, the fp64 reference and the tolerances.
//
// Why these tolerances (fp32, unit roundoff u = 2^-24):
//  * Element-wise, any summation order of a k-term dot product satisfies
//    |fl(x.y) - x.y| <= gamma_k |x|.|y| with gamma_k ~= k u; the alpha scaling, the beta term
//    and the final add cost about 3 more roundings. So |c - ref| <= (k + 4) u mag is a bound
//    no correct fp32 rung can exceed, whatever its blocking (mag = |alpha||A||B| + |beta||C0|).
//  * That bound is loose: it lets through a rung that rounds its inputs to tf32 (error about
//    2^-11 |a||b| per term, growing like sqrt(k), so under k u at k >~ 500) or one that
//    drops a whole term at large k. The normwise check closes that hole: rounding errors of a
//    dot product add like a random walk, so ||C - ref||_F / ||ref||_F stays near 0.3 u sqrt(k)
//    for a sequential sum of zero-mean data and 0.6 u sqrt(k) for positive data (less for
//    blocked sums). We allow 4 u sqrt(k + 2): 7x headroom over the worst of those, while a
//    tf32-input rung (~3e-4, independent of k) is 19x over it at k = 4096 and 5x at 65536, and
//    a dropped term (~1/sqrt(k)) is far over. tests/cpu/test_reference.cpp and
//    tests/gpu/test_broken.cu prove both.
//  * The normwise check is a statement about many elements: their errors average out and
//    ||ref|| is not dominated by one element that beta C0 and alpha AB nearly cancel. A result
//    of fewer than kNormwiseMinElements elements is judged by the element-wise bound alone
//    (a 1 x 1 x 1 tf32 product whose -1.25 ab and 0.5 c nearly cancel can be off by 4e-3 of the
//    result, and by less than (k + 4) u mag + 2^-9 mag: a correct tf32 answer).
#include "check/gemm_check.hpp"

#include "check/host_util.hpp"

#include <rungs/reference.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <thread>

namespace rungs::check {

namespace {

constexpr double kU = 1.0 / 16777216.0;  // 2^-24

using util::draw;
using util::splitmix64;

// f(lo, hi) over [0, n) on up to one thread per 4096 iterations.
template <typename F>
void parallel_for(int64_t n, F f) {
  util::parallel_chunks(n, std::min(util::hw_threads(), n / 4096 + 1),
                        [&f](int64_t, int64_t lo, int64_t hi) { f(lo, hi); });
}

// Threads for `work` units of a loop body: one per 2^20, up to the machine's.
int64_t threads_for(int64_t work) { return std::min(util::hw_threads(), work / (int64_t{1} << 20) + 1); }

// f(lo, hi) over the rows [0, rows) of a rows x cols loop, one thread per 2^20 elements.
template <typename F>
void parallel_rows(int64_t rows, int64_t cols, F f) {
  util::parallel_chunks(rows, threads_for(rows * std::max<int64_t>(cols, 1)),
                        [&f](int64_t, int64_t lo, int64_t hi) { f(lo, hi); });
}

// Fill a stored rows x cols matrix with stride ld: values in the first cols, NaN in the padding.
void fill(std::vector<float>& v, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, uint64_t stream) {
  v.assign(static_cast<size_t>(rows * ld), std::numeric_limits<float>::quiet_NaN());
  parallel_rows(rows, cols, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t c = 0; c < cols; ++c) v[r * ld + c] = draw(seed, stream, static_cast<uint64_t>(r * cols + c));
  });
}

inline double op_at(const std::vector<float>& p, int64_t ld, bool trans, int64_t r, int64_t c) {
  return trans ? p[c * ld + r] : p[r * ld + c];
}

}  // namespace

std::string describe(const GemmShape& s0) {
  const GemmShape s = normalized(s0);
  std::ostringstream os;
  os << s.m << "x" << s.n << "x" << s.k << " " << (s.ta == Trans::N ? "n" : "t") << (s.tb == Trans::N ? "n" : "t")
     << " lda=" << s.lda << " ldb=" << s.ldb << " ldc=" << s.ldc << " alpha=" << s.alpha << " beta=" << s.beta;
  return os.str();
}

int64_t padding_written(const GemmShape& s0, const float* C) {
  const GemmShape s = normalized(s0);
  int64_t written = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = s.n; j < s.ldc; ++j) written += !std::isnan(C[i * s.ldc + j]);
  return written;
}

GemmShape normalized(GemmShape s) {
  const int64_t a_row = s.ta == Trans::N ? s.k : s.m;
  const int64_t b_row = s.tb == Trans::N ? s.n : s.k;
  if (s.lda == 0) s.lda = std::max<int64_t>(1, a_row);
  if (s.ldb == 0) s.ldb = std::max<int64_t>(1, b_row);
  if (s.ldc == 0) s.ldc = std::max<int64_t>(1, s.n);
  return s;
}
int64_t a_elems(const GemmShape& s) { return (s.ta == Trans::N ? s.m : s.k) * normalized(s).lda; }
int64_t b_elems(const GemmShape& s) { return (s.tb == Trans::N ? s.k : s.n) * normalized(s).ldb; }
int64_t c_elems(const GemmShape& s) { return s.m * normalized(s).ldc; }

const char* gemm_kind_name(GemmKind kind) {
  switch (kind) {
    case GemmKind::f32: return "f32";
    case GemmKind::tf32: return "tf32";
    case GemmKind::tf32x3: return "tf32x3";
    case GemmKind::f16: return "f16";
    case GemmKind::bf16: return "bf16";
    case GemmKind::fp8: return "fp8";
  }
  return "?";
}
GemmType gemm_type_of(GemmKind kind) {
  return kind == GemmKind::f16    ? GemmType::f16
         : kind == GemmKind::bf16 ? GemmType::bf16
         : kind == GemmKind::fp8  ? GemmType::fp8
                                  : GemmType::f32;
}
Math math_of(GemmKind kind) {
  return kind == GemmKind::tf32 ? Math::tf32 : kind == GemmKind::tf32x3 ? Math::tf32x3 : Math::fp32;
}
bool is_16bit(GemmKind kind) { return kind == GemmKind::f16 || kind == GemmKind::bf16; }
GemmKind c_kind(GemmKind kind) { return kind == GemmKind::fp8 ? GemmKind::bf16 : kind; }

std::vector<uint16_t> to_16bit(const std::vector<float>& v, GemmKind kind) {
  std::vector<uint16_t> out(v.size());
  const bool h = kind == GemmKind::f16;
  parallel_for(static_cast<int64_t>(v.size()), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = h ? __half_as_ushort(__float2half_rn(v[i])) : __bfloat16_as_ushort(__float2bfloat16_rn(v[i]));
  });
  return out;
}
std::vector<float> from_16bit(const std::vector<uint16_t>& v, GemmKind kind) {
  std::vector<float> out(v.size());
  const bool h = kind == GemmKind::f16;
  parallel_for(static_cast<int64_t>(v.size()), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = h ? __half2float(__ushort_as_half(v[i])) : __bfloat162float(__ushort_as_bfloat16(v[i]));
  });
  return out;
}

void round_inputs(GemmData& d, GemmKind kind) {
  if (!is_16bit(kind)) return;
  for (auto* v : {&d.A, &d.B, &d.C0}) *v = from_16bit(to_16bit(*v, kind), kind);
}

GemmData make_gemm_data(const GemmShape& s0, uint64_t seed) {
  const GemmShape s = normalized(s0);
  GemmData d;
  fill(d.A, s.ta == Trans::N ? s.m : s.k, s.ta == Trans::N ? s.k : s.m, s.lda, seed, 1);
  fill(d.B, s.tb == Trans::N ? s.k : s.n, s.tb == Trans::N ? s.n : s.k, s.ldb, seed, 2);
  fill(d.C0, s.m, s.n, s.ldc, seed, 3);
  return d;
}

GemmReference gemm_reference(const GemmShape& s0, const GemmData& d, int64_t max_rows, uint64_t seed) {
  const GemmShape s = normalized(s0);
  GemmReference r;
  if (max_rows <= 0 || s.m <= max_rows) {
    for (int64_t i = 0; i < s.m; ++i) r.rows.push_back(i);
  } else {  // a random sample that always holds the first and the last row (the ragged edge)
    std::vector<char> pick(static_cast<size_t>(s.m), 0);
    pick[0] = pick[s.m - 1] = 1;
    int64_t got = 2;
    for (uint64_t i = 0; got < max_rows; ++i) {
      const int64_t row = static_cast<int64_t>(splitmix64(seed ^ (i * 0x9E37u)) % static_cast<uint64_t>(s.m));
      if (!pick[row]) pick[row] = 1, ++got;
    }
    for (int64_t i = 0; i < s.m; ++i)
      if (pick[i]) r.rows.push_back(i);
  }
  const int64_t R = static_cast<int64_t>(r.rows.size()), n = s.n, k = s.k;
  r.ref.assign(static_cast<size_t>(R * n), 0.0);
  r.mag.assign(static_cast<size_t>(R * n), 0.0);
  const bool ta = s.ta == Trans::T, tb = s.tb == Trans::T;
  const bool empty = k == 0 || s.alpha == 0.0f;  // BLAS: A and B are not read
  // op(B) packed once as a dense k x n panel, so the inner loop streams a row.
  std::vector<double> Bp(empty ? 0 : static_cast<size_t>(k * n));
  if (!empty)
    parallel_rows(k, n, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p)
        for (int64_t j = 0; j < n; ++j) Bp[p * n + j] = op_at(d.B, s.ldb, tb, p, j);
    });
  const double alpha = s.alpha, beta = s.beta;
  // The work is split by multiply-adds, not rows: one thread per 2^20 of them, up to the machine's,
  // over (row, column block) items, so a product of few rows (the decode shapes: m = 1..128 against
  // thousands of columns) still spreads over the threads, about 4 items a thread where rows are
  // few. Each element is summed by one thread in k order: the result does not depend on the split.
  const int64_t threads = threads_for(R * n * std::max<int64_t>(k, 1));
  const int64_t col_blocks = R == 0 ? 1 : std::max<int64_t>(1, std::min((n + 63) / 64, (4 * threads + R - 1) / R));
  const int64_t cols = (n + col_blocks - 1) / col_blocks;
  util::parallel_chunks(R * col_blocks, threads, [&](int64_t, int64_t lo, int64_t hi) {
    std::vector<double> acc(static_cast<size_t>(cols)), mag(static_cast<size_t>(cols));
    for (int64_t item = lo; item < hi; ++item) {
      const int64_t ri = item / col_blocks, i = r.rows[ri];
      const int64_t j0 = (item % col_blocks) * cols, j1 = std::min(n, j0 + cols), w = j1 - j0;
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      if (!empty)
        for (int64_t p = 0; p < k; ++p) {
          const double a = op_at(d.A, s.lda, ta, i, p);
          const double aa = std::fabs(a);
          const double* b = &Bp[p * n + j0];
          for (int64_t j = 0; j < w; ++j) {
            acc[j] += a * b[j];
            mag[j] += aa * std::fabs(b[j]);
          }
        }
      for (int64_t j = j0; j < j1; ++j) {
        const double c0 = beta == 0.0 ? 0.0 : static_cast<double>(d.C0[i * s.ldc + j]);
        r.ref[ri * n + j] = (empty ? 0.0 : alpha * acc[j - j0]) + (beta == 0.0 ? 0.0 : beta * c0);
        r.mag[ri * n + j] = (empty ? 0.0 : std::fabs(alpha) * mag[j - j0]) + std::fabs(beta) * std::fabs(c0);
      }
    }
  });
  return r;
}

double elementwise_gamma(int64_t k) { return static_cast<double>(k + 4) * kU; }
double normwise_tolerance(int64_t k) { return 4.0 * kU * std::sqrt(static_cast<double>(k + 2)); }

void ErrorTally::add(double ref, double mag, double got) {
  if (!std::isfinite(ref) || !std::isfinite(got)) {
    // Non-finite values must match exactly in kind: NaN for NaN, Inf of the same sign.
    const bool same = (std::isnan(ref) && std::isnan(got)) || (std::isinf(ref) && got == ref);
    if (!same) ++e_.bad;
    return;
  }
  const double err = std::fabs(got - ref);
  ++count_;
  err2_ += err * err;
  ref2_ += ref * ref;
  if (ref != 0.0) {
    const double rel = err / std::fabs(ref);
    e_.max_rel = std::max(e_.max_rel, rel);
    rel_sum_ += rel;
    ++rel_count_;
  }
  const double bound = mag > 0.0 ? gamma_ * mag + eta_ : 0.0;
  if (bound > 0.0) e_.bound_ratio = std::max(e_.bound_ratio, err / bound);
  if (err > bound) ++over_bound_;  // also catches err > 0 where mag == 0
}

double ErrorTally::normwise_eta() const {
  return eta_ > 0.0 && ref2_ > 0.0 ? eta_ * std::sqrt(static_cast<double>(count_) / ref2_) : 0.0;
}

int64_t ErrorTally::finish() const {
  e_.mean_rel = rel_count_ ? rel_sum_ / static_cast<double>(rel_count_) : 0.0;
  e_.normwise = ref2_ > 0 ? std::sqrt(err2_ / ref2_) : std::sqrt(err2_);
  return over_bound_;
}

// The tensor-core kinds. Why these tolerances (u = 2^-24 as above):
//  * f16 / bf16: the inputs are exact (the test data is rounded to the format first), the products
//    exact in fp32 and the sums fp32, so the fp32 bound (k+4) u mag holds for the fp32 result c32;
//    the store rounds c32 once to the format: |fl(c32) - c32| <= uo |c32| <= uo (|ref| + e32). With
//    |ref| <= mag: |c - ref| <= ((k+4) u (1+uo) + uo) mag, rigorous. Normwise, the rounding adds at
//    most uo relative per element, so ||C - ref|| / ||ref|| <= uo + the fp32 part (4 u sqrt(k+2)).
//    A rung that accumulated in f16/bf16 would be over it at moderate k.
//  * tf32: an input x rounded to tf32 is off by at most 2^-11 |x| (2^-10 if truncated), so a
//    product by at most 2^-9 + 2^-20 relative (truncation, both operands): element-wise
//    (k+4) u + 2^-9 + 2^-20 is rigorous. Normwise the input errors average out per element
//    (random signs) except for truncation's bias (~2^-11 per operand towards zero): observed
//    ~3e-4 with rounding and ~7e-4 with truncation; we allow 2^-10 (9.8e-4), "about 1e-3".
//  * tf32x3: x = big + small + d with |d| <= 2^-22 |x| (small is itself rounded to tf32); the
//    dropped small*small is <= 2^-22 |ab|, so each product is off by <= 3 * 2^-22 = 12 u relative
//    (plus fp32 accumulation): element-wise (k+16) u mag, rigorous. Normwise it must meet the same
//    4 u sqrt(k+2) as an fp32 rung (and the GPU test holds it to cuBLAS sgemm's own error).
double elementwise_gamma(int64_t k, GemmKind kind) {
  const double base = elementwise_gamma(k);
  switch (kind) {
    case GemmKind::f32: return base;
    case GemmKind::tf32: return base + std::ldexp(1.0, -9) + std::ldexp(1.0, -20);
    case GemmKind::tf32x3: return static_cast<double>(k + 16) * kU;
    case GemmKind::f16: return base * (1 + std::ldexp(1.0, -11)) + std::ldexp(1.0, -11);
    case GemmKind::bf16: return base * (1 + std::ldexp(1.0, -8)) + std::ldexp(1.0, -8);
    case GemmKind::fp8: return fp8_elementwise_gamma(k, true);
  }
  return base;
}
// A result in the output format's subnormal range is rounded to a multiple of its smallest
// subnormal, not to uo relative: |fl(c) - c| <= uo |c| + eta, eta = half that spacing (element-wise
// added to the bound; normwise, eta sqrt(elements) / ||ref|| added to the tolerance). f16's is 2^-24
// (results below 2^-14 are subnormal), so eta = 2^-25 ~ 3e-8, which |A||B| of a short sum can be
// near (k = 1 products of test data, first seen in GemmTc.ShortLastRow: 15 of 2.6 million elements
// over uo |c|, for cuBLAS and every rung alike); bf16's is 2^-133; fp32's 2^-149, beside gamma, 0.
double output_eta(GemmKind kind) {
  switch (kind) {
    case GemmKind::f16: return std::ldexp(1.0, -25);
    case GemmKind::bf16: case GemmKind::fp8: return std::ldexp(1.0, -134);
    default: return 0.0;
  }
}
double normwise_tolerance(int64_t k, GemmKind kind) {
  const double base = normwise_tolerance(k);
  switch (kind) {
    case GemmKind::f32: case GemmKind::tf32x3: return base;
    case GemmKind::tf32: return base + std::ldexp(1.0, -10);
    case GemmKind::f16: return base + std::ldexp(1.0, -11);
    case GemmKind::bf16: return base + std::ldexp(1.0, -8);
    case GemmKind::fp8: return fp8_normwise_tolerance(k, true);
  }
  return base;
}

namespace {
GemmErrors compare_with(const GemmShape& s0, const GemmReference& r, const float* C, double gamma, double tol,
                        double eta = 0);
}  // namespace

// FP8. The data: fp8 values x scales 2^j (1 + i/16) are exact in float, and so is any product of
// two of them, so the fp64 reference of the dequantized operands is the exact answer and every
// difference is the rung's accumulation and output rounding. Why these tolerances (u = 2^-24):
//  * The products are exact in fp32 (fp8 x fp8 has at most 8 significant bits, a scale product 10).
//    An fp32 accumulation meets (k+4) u mag as for fp32. The sm_90 tensor core does not accumulate
//    fp8 products in full fp32: it keeps about 14 bits (the aligned addends are truncated), which
//    over k = 4096 unpromoted reaches ~2e-2 relative; a rung promotes its partial sums into fp32
//    registers at least every 128 products (one block of Scaling::block128). Each 128-product part
//    is then off by at most about 128 truncations of 2^-14 of its largest term, <= 2^-7 of its
//    sum |a||b|: ua = 2^-7 element-wise, added to the fp32 gamma (rigorous for promotion every 128,
//    loose as element-wise bounds are). Normwise the truncations of a part are biased towards
//    zero but average over its terms and over the parts: we allow 2^-10 (9.8e-4) on top of the
//    fp32 tolerance, which an unpromoted k = 4096 accumulation (~2e-2) exceeds 20x over. Not yet
//    measured on a rung of ours: to be revisited with the first fp8 rung's numbers.
//  * The output: a float C adds nothing; a bf16 C is rounded once (uo = 2^-8) as in the bf16
//    bound: element-wise (gamma32 + ua)(1 + uo) + uo, normwise + uo, eta as bf16's.
//  * A rung that reads a scale in the wrong place multiplies a part of the sum by another scale
//    (a factor between 2^-6 and 2^6.9 in this data): far outside both (GemmFp8.WrongScaleLayoutIsCaught).
namespace {
constexpr double kFp8AccumElementwise = 1.0 / 128.0;   // 2^-7
constexpr double kFp8AccumNormwise = 1.0 / 1024.0;     // 2^-10
constexpr double kBf16U = 1.0 / 256.0;                 // 2^-8
constexpr uint8_t kFp8NaN = 0x7F;                      // NaN in e4m3 and in e5m2

uint8_t float_to_fp8(float x, Fp8Format f) {
  return static_cast<uint8_t>(
      __nv_cvt_float_to_fp8(x, __NV_SATFINITE, f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2));
}

// Scale i of stream `stream`: 2^j (1 + i/16), j in [-3, 3], i in [0, 15].
float draw_scale(uint64_t seed, uint64_t stream, uint64_t i) {
  const uint64_t r = util::bits_at(seed, stream, i);
  const int j = static_cast<int>(r % 7) - 3;
  const int frac = static_cast<int>((r >> 8) % 16);
  return std::ldexp(1.0f + static_cast<float>(frac) / 16.0f, j);
}

// The scale of element (r, c) of op(X) (X = A: r a row of op(A), c along k; X = B: r along k, c a
// column of op(B)) in the layout of `kind`.
inline int64_t scale_index_a(Scaling kind, int64_t i, int64_t p, int64_t kb) {
  return kind == Scaling::tensor ? 0 : kind == Scaling::outer ? i : i * kb + p / 128;
}
inline int64_t scale_index_b(Scaling kind, int64_t p, int64_t j, int64_t kb) {
  return kind == Scaling::tensor ? 0 : kind == Scaling::outer ? j : (j / 128) * kb + p / 128;
}
}  // namespace

const char* fp8_format_name(Fp8Format f) { return f == Fp8Format::e4m3 ? "e4m3" : "e5m2"; }

int64_t fp8_scales_a(Scaling kind, int64_t m, int64_t k) {
  return kind == Scaling::tensor ? 1 : kind == Scaling::outer ? m : m * ((k + 127) / 128);
}
int64_t fp8_scales_b(Scaling kind, int64_t n, int64_t k) {
  return kind == Scaling::tensor ? 1 : kind == Scaling::outer ? n : ((n + 127) / 128) * ((k + 127) / 128);
}

float fp8_to_float(uint8_t byte, Fp8Format f) {
  if (f == Fp8Format::e4m3) {
    __nv_fp8_e4m3 v;
    v.__x = byte;
    return static_cast<float>(v);
  }
  __nv_fp8_e5m2 v;
  v.__x = byte;
  return static_cast<float>(v);
}

void fp8_dequantize(const GemmShape& s0, Fp8Format fa, Fp8Format fb, Scaling kind, const std::vector<float>& sa,
                    const std::vector<float>& sb, Fp8Data& d) {
  const GemmShape s = normalized(s0);
  const int64_t kb = (s.k + 127) / 128;
  const bool ta = s.ta == Trans::T, tb = s.tb == Trans::T;
  const int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
  const int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
  d.deq.A.assign(d.A.size(), std::numeric_limits<float>::quiet_NaN());
  d.deq.B.assign(d.B.size(), std::numeric_limits<float>::quiet_NaN());
  parallel_rows(a_rows, a_cols, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t c = 0; c < a_cols; ++c) {
        const int64_t i = ta ? c : r, p = ta ? r : c;  // element (i, p) of op(A)
        d.deq.A[r * s.lda + c] = fp8_to_float(d.A[r * s.lda + c], fa) * sa[scale_index_a(kind, i, p, kb)];
      }
  });
  parallel_rows(b_rows, b_cols, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t c = 0; c < b_cols; ++c) {
        const int64_t p = tb ? c : r, j = tb ? r : c;  // element (p, j) of op(B)
        d.deq.B[r * s.ldb + c] = fp8_to_float(d.B[r * s.ldb + c], fb) * sb[scale_index_b(kind, p, j, kb)];
      }
  });
}

Fp8Data make_fp8_data(const GemmShape& s0, Fp8Format fa, Fp8Format fb, Scaling kind, bool bf16_out, uint64_t seed) {
  const GemmShape s = normalized(s0);
  Fp8Data d;
  const auto quantize = [&](std::vector<uint8_t>& out, int64_t rows, int64_t cols, int64_t ld, Fp8Format f,
                            uint64_t stream) {
    out.assign(static_cast<size_t>(rows * ld), kFp8NaN);
    parallel_rows(rows, cols, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[r * ld + c] = float_to_fp8(8.0f * draw(seed, stream, static_cast<uint64_t>(r * cols + c)), f);
    });
  };
  quantize(d.A, s.ta == Trans::N ? s.m : s.k, s.ta == Trans::N ? s.k : s.m, s.lda, fa, 1);
  quantize(d.B, s.tb == Trans::N ? s.k : s.n, s.tb == Trans::N ? s.n : s.k, s.ldb, fb, 2);
  d.sa.resize(static_cast<size_t>(fp8_scales_a(kind, s.m, s.k)));
  d.sb.resize(static_cast<size_t>(fp8_scales_b(kind, s.n, s.k)));
  for (size_t i = 0; i < d.sa.size(); ++i) d.sa[i] = draw_scale(seed, 4, i);
  for (size_t i = 0; i < d.sb.size(); ++i) d.sb[i] = draw_scale(seed, 5, i);
  fill(d.deq.C0, s.m, s.n, s.ldc, seed, 3);
  if (bf16_out) d.deq.C0 = from_16bit(to_16bit(d.deq.C0, GemmKind::bf16), GemmKind::bf16);
  fp8_dequantize(s, fa, fb, kind, d.sa, d.sb, d);
  return d;
}

double fp8_elementwise_gamma(int64_t k, bool bf16_out) {
  const double g = elementwise_gamma(k) + kFp8AccumElementwise;
  return bf16_out ? g * (1 + kBf16U) + kBf16U : g;
}
double fp8_normwise_tolerance(int64_t k, bool bf16_out) {
  return normwise_tolerance(k) + kFp8AccumNormwise + (bf16_out ? kBf16U : 0.0);
}
GemmErrors compare_gemm_fp8(const GemmShape& s0, const GemmReference& r, const float* C, bool bf16_out) {
  const GemmShape s = normalized(s0);
  return compare_with(s, r, C, fp8_elementwise_gamma(s.k, bf16_out), fp8_normwise_tolerance(s.k, bf16_out),
                      bf16_out ? output_eta(GemmKind::bf16) : 0.0);
}

GemmErrors compare_gemm(const GemmShape& s0, const GemmReference& r, const float* C, double looseness) {
  const GemmShape s = normalized(s0);
  return compare_with(s, r, C, elementwise_gamma(s.k) * looseness, normwise_tolerance(s.k) * looseness);
}
GemmErrors compare_gemm(const GemmShape& s0, const GemmReference& r, const float* C, GemmKind kind) {
  const GemmShape s = normalized(s0);
  return compare_with(s, r, C, elementwise_gamma(s.k, kind), normwise_tolerance(s.k, kind), output_eta(kind));
}

namespace {
GemmErrors compare_with(const GemmShape& s0, const GemmReference& r, const float* C, double gamma, double tol,
                        double eta) {
  const GemmShape s = normalized(s0);
  GemmErrors e;
  ErrorTally tally(e, gamma, eta);
  for (size_t ri = 0; ri < r.rows.size(); ++ri) {
    const int64_t i = r.rows[ri];
    for (int64_t j = 0; j < s.n; ++j) tally.add(r.ref[ri * s.n + j], r.mag[ri * s.n + j], C[i * s.ldc + j]);
  }
  const int64_t over_bound = tally.finish();
  std::ostringstream why;
  if (e.bad) why << e.bad << " element(s) non-finite where the reference is not (or unwritten); ";
  if (over_bound) why << over_bound << " element(s) beyond the element-wise bound gamma|A||B| + eta (worst " << e.bound_ratio << "x); ";
  tol += tally.normwise_eta();
  if (tally.elements() >= kNormwiseMinElements && e.normwise > tol)
    why << "normwise error " << e.normwise << " > tolerance " << tol << "; ";
  e.reason = why.str();
  e.pass = e.reason.empty();
  return e;
}
}  // namespace

}  // namespace rungs::check
