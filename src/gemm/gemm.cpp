// rungs::gemm: argument checking, the k == 0 / alpha == 0 shortcut, variant lookup and
// the `auto` choice. Every rung is reached through here, the CLI and the tests included.
// One checking path for every element type: gemm_any<T> below; the type and math mode pick
// which of a rung's entry points runs (a null one is rungs::Unsupported).
#include "core/errors.hpp"
#include "core/mem_range.hpp"
#include "core/nvtx.hpp"
#include "gemm/epilogue.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/tuning.hpp"

#include <climits>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace rungs {

namespace {

const sgemm::Rung& find_rung(const std::string& name) {
  return detail::find_rung(sgemm::ladder(), "gemm", name);
}

const char* math_name(Math m) {
  switch (m) {
    case Math::fp32: return "fp32";
    case Math::tf32: return "tf32";
    case Math::tf32x3: return "tf32x3";
  }
  return "?";
}

// Math modes apply to float inputs only.
void check_math(Math math, GemmType type) {
  if (math != Math::fp32 && math != Math::tf32 && math != Math::tf32x3)
    detail::fail_arg("gemm", "opts.math", static_cast<int>(math), "Math::fp32, Math::tf32 or Math::tf32x3");
  if (type != GemmType::f32 && math != Math::fp32)
    throw Error(std::string("rungs::gemm: invalid argument opts.math = ") + math_name(math) + " for " +
                (type == GemmType::f16 ? "__half" : type == GemmType::bf16 ? "__nv_bfloat16" : "fp8") +
                " inputs (must be Math::fp32: math modes apply to float inputs only)");
}

// The entry point of `rung` for this element type and math mode, or Unsupported.
template <typename T>
struct Entry;
template <>
struct Entry<float> {
  static constexpr GemmType type = GemmType::f32;
  static sgemm::RunFn get(const sgemm::Rung& r, Math m) {
    sgemm::RunFn f = m == Math::tf32 ? r.tf32 : m == Math::tf32x3 ? r.tf32x3 : r.run;
    if (!f) detail::unsupported(r.name, std::string("does not do float inputs with math = ") + math_name(m));
    return f;
  }
};
template <>
struct Entry<__half> {
  static constexpr GemmType type = GemmType::f16;
  static sgemm::RunFnH get(const sgemm::Rung& r, Math) {
    if (!r.f16) detail::unsupported(r.name, "does not do __half (f16) inputs");
    return r.f16;
  }
};
template <>
struct Entry<__nv_bfloat16> {
  static constexpr GemmType type = GemmType::bf16;
  static sgemm::RunFnBF get(const sgemm::Rung& r, Math) {
    if (!r.bf16) detail::unsupported(r.name, "does not do __nv_bfloat16 (bf16) inputs");
    return r.bf16;
  }
};

void gemm_epi(sgemm::EpiCall c, const Options& opts);
template <typename T>
constexpr sgemm::EpiOut epi_out() {
  return std::is_same_v<T, float> ? sgemm::EpiOut::f32
         : std::is_same_v<T, __half> ? sgemm::EpiOut::f16
                                     : sgemm::EpiOut::bf16;
}

template <typename T>
void gemm_any(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, float beta, T* C, int64_t ldc, const Options& opts) {
  if (sgemm::epilogue::any(opts.epilogue)) {
    sgemm::EpiCall c{};
    c.type = Entry<T>::type, c.math = opts.math, c.ta = ta, c.tb = tb, c.m = m, c.n = n, c.k = k, c.alpha = alpha;
    c.A = A, c.lda = lda, c.B = B, c.ldb = ldb, c.beta = beta, c.C = C, c.c_type = epi_out<T>(), c.ldc = ldc;
    c.epi = opts.epilogue;
    return gemm_epi(c, opts);
  }
  check_math(opts.math, Entry<T>::type);
  detail::check_gemm_shape("gemm", ta, tb, m, n, k, lda, ldb, ldc);
  // Resolve the variant before the early returns so a bad name always throws.
  const std::string name =
      opts.variant == "auto" ? resolve_gemm_variant(ta, tb, m, n, k, opts, Entry<T>::type, lda, ldb) : opts.variant;
  const sgemm::Rung& rung = find_rung(name);
  const auto run = Entry<T>::get(rung, opts.math);
  if (m == 0 || n == 0) return;
  const detail::NvtxRange range("gemm", rung.name);  // "rungs::gemm/<rung>" on a profiler's timeline
  detail::check_gemm_pointers("gemm", "a device pointer", m, n, k, alpha, A, B, C);
  const bool reads_ab = k > 0 && alpha != 0.0f;
  const int64_t lim = INT_MAX;
  if (m > lim || n > lim || k > lim) {
    std::ostringstream os;
    os << "m, n, k must each be <= 2^31-1 (got " << m << " x " << n << " x " << k << ")";
    detail::unsupported(rung.name, os.str());
  }
  detail::require_sm("gemm", rung.name, rung.min_sm);
  if (!reads_ab) {  // C = beta * C: BLAS semantics, A and B are not read
    sgemm::scale_c(m, n, beta, C, ldc, opts.stream);
    return;
  }
  const sgemm::ArgsT<T> args{ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts.stream};
  run(args);
}


// FP8: the eight overloads share gemm_fp8, which takes them as one ArgsF8 (types as tags).
const char* scaling_name(Scaling s) {
  switch (s) {
    case Scaling::tensor: return "tensor";
    case Scaling::outer: return "outer";
    case Scaling::block128: return "block128";
  }
  return "?";
}

// How many floats each scale array holds for this shape (Scaling in rungs.hpp); k == 0: none read.
void scale_lengths(Scaling kind, int64_t m, int64_t n, int64_t k, int64_t& na, int64_t& nb) {
  const int64_t kb = (k + 127) / 128;
  switch (kind) {
    case Scaling::tensor: na = 1, nb = 1; break;
    case Scaling::outer: na = m, nb = n; break;
    case Scaling::block128: na = m * kb, nb = ((n + 127) / 128) * kb; break;
  }
}

// `arg` (bias, c_scales or a scale array) holds `count` elements of `elem` bytes: device memory, one allocation
// long enough.
void check_length(const char* arg, const void* p, int64_t count, size_t elem, const char* what) {
  switch (detail::device_range(p, static_cast<size_t>(count) * elem)) {
    case detail::MemRange::inside:
    case detail::MemRange::unknown: return;
    case detail::MemRange::not_device: {
      std::ostringstream os;
      os << "rungs::gemm: invalid argument " << arg << " = " << p
         << " (must be device memory: the driver knows no device allocation holding it)";
      throw Error(os.str());
    }
    case detail::MemRange::too_short: {
      std::ostringstream os;
      os << "rungs::gemm: invalid argument " << arg << " = " << p << " (must hold " << count << " " << what
         << "; its allocation ends sooner)";
      throw Error(os.str());
    }
  }
}

// scales.a or scales.b holds `count` floats: device memory, one allocation long enough.
void check_scale_length(const char* arg, const float* p, int64_t count, Scaling kind) {
  check_length(arg, p, count, sizeof(float),
               (std::string("floats for Scaling::") + scaling_name(kind) + " at this shape").c_str());
}

// An fp8 call's scale arguments, where they are read (m*n > 0, k > 0, alpha != 0): the kind, then
// both pointers non-null.
void check_scale_args(const Scales& scales, bool reads_ab) {
  const Scaling kind = scales.kind;
  if (kind != Scaling::tensor && kind != Scaling::outer && kind != Scaling::block128)
    detail::fail_arg("gemm", "scales.kind", static_cast<int>(kind),
                     "Scaling::tensor, Scaling::outer or Scaling::block128");
  if (reads_ab && scales.a == nullptr)
    detail::fail_arg("gemm", "scales.a", "nullptr", "a device pointer (k > 0, alpha != 0)");
  if (reads_ab && scales.b == nullptr)
    detail::fail_arg("gemm", "scales.b", "nullptr", "a device pointer (k > 0, alpha != 0)");
}

// The order of the checks: everything that needs no device first (math, shape, scale kind, null
// pointers), so argument errors are reported on any machine; then the variant (auto asks the
// device), the rung's fp8 entry, the m == 0 || n == 0 no-op, the sizes and the architecture; then
// the scale arrays' lengths (a driver query), only where they are read.
void gemm_fp8(sgemm::ArgsF8 a, const Options& opts) {
  if (sgemm::epilogue::any(opts.epilogue)) {
    sgemm::EpiCall c{};
    c.type = GemmType::fp8, c.math = opts.math, c.ta = a.ta, c.tb = a.tb, c.m = a.m, c.n = a.n, c.k = a.k;
    c.alpha = a.alpha, c.A = a.A, c.a_type = a.a_type, c.lda = a.lda, c.B = a.B, c.b_type = a.b_type, c.ldb = a.ldb;
    c.scales = a.scales, c.beta = a.beta, c.C = a.C, c.ldc = a.ldc, c.epi = opts.epilogue;
    c.c_type = a.c_type == sgemm::F8Out::bf16 ? sgemm::EpiOut::bf16 : sgemm::EpiOut::f32;
    return gemm_epi(c, opts);
  }
  check_math(opts.math, GemmType::fp8);
  detail::check_gemm_shape("gemm", a.ta, a.tb, a.m, a.n, a.k, a.lda, a.ldb, a.ldc);
  const Scaling kind = a.scales.kind;
  // The scales are read exactly where A and B are (m*n > 0, k > 0, alpha != 0); elsewhere they may
  // be null, as A and B may.
  const bool reads_ab = a.m > 0 && a.n > 0 && a.k > 0 && a.alpha != 0.0f;
  check_scale_args(a.scales, reads_ab);
  // Resolve the variant before the early returns so a bad name always throws.
  const std::string name = opts.variant == "auto"
                               ? resolve_gemm_variant(a.ta, a.tb, a.m, a.n, a.k, opts, GemmType::fp8, a.lda, a.ldb, kind)
                               : opts.variant;
  const sgemm::Rung& rung = find_rung(name);
  if (!rung.fp8) detail::unsupported(rung.name, "does not do fp8 inputs");
  if (a.m == 0 || a.n == 0) return;
  const detail::NvtxRange range("gemm", rung.name);
  detail::check_gemm_pointers("gemm", "a device pointer", a.m, a.n, a.k, a.alpha, a.A, a.B, a.C);
  const int64_t lim = INT_MAX;
  if (a.m > lim || a.n > lim || a.k > lim) {
    std::ostringstream os;
    os << "m, n, k must each be <= 2^31-1 (got " << a.m << " x " << a.n << " x " << a.k << ")";
    detail::unsupported(rung.name, os.str());
  }
  detail::require_sm("gemm", rung.name, rung.min_sm);
  if (!reads_ab) {  // C = beta * C: BLAS semantics, A, B and the scales are not read
    if (a.c_type == sgemm::F8Out::bf16)
      sgemm::scale_c(a.m, a.n, a.beta, static_cast<__nv_bfloat16*>(a.C), a.ldc, opts.stream);
    else
      sgemm::scale_c(a.m, a.n, a.beta, static_cast<float*>(a.C), a.ldc, opts.stream);
    return;
  }
  int64_t na = 0, nb = 0;
  scale_lengths(kind, a.m, a.n, a.k, na, nb);
  check_scale_length("scales.a", a.scales.a, na, kind);
  check_scale_length("scales.b", a.scales.b, nb, kind);
  a.stream = opts.stream;
  rung.fp8(a);
}

template <typename T>
struct F8Tag;
template <>
struct F8Tag<__nv_fp8_e4m3> {
  static constexpr sgemm::F8 value = sgemm::F8::e4m3;
};
template <>
struct F8Tag<__nv_fp8_e5m2> {
  static constexpr sgemm::F8 value = sgemm::F8::e5m2;
};
template <typename T>
struct F8OutTag;
template <>
struct F8OutTag<__nv_bfloat16> {
  static constexpr sgemm::F8Out value = sgemm::F8Out::bf16;
};
template <>
struct F8OutTag<float> {
  static constexpr sgemm::F8Out value = sgemm::F8Out::f32;
};

template <typename TA, typename TB, typename TC>
void gemm_f8(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const TA* A, int64_t lda, const TB* B,
             int64_t ldb, const Scales& scales, float beta, TC* C, int64_t ldc, const Options& opts) {
  sgemm::ArgsF8 a{};
  a.ta = ta, a.tb = tb, a.m = m, a.n = n, a.k = k, a.alpha = alpha;
  a.A = A, a.a_type = F8Tag<TA>::value, a.lda = lda;
  a.B = B, a.b_type = F8Tag<TB>::value, a.ldb = ldb;
  a.scales = scales, a.beta = beta;
  a.C = C, a.c_type = F8OutTag<TC>::value, a.ldc = ldc;
  gemm_fp8(a, opts);
}

const char* epi_type_name(sgemm::EpiOut t) {
  switch (t) {
    case sgemm::EpiOut::f32: return "float";
    case sgemm::EpiOut::f16: return "__half";
    case sgemm::EpiOut::bf16: return "__nv_bfloat16";
    case sgemm::EpiOut::e4m3: return "float (an fp8 output)";
  }
  return "?";
}

// A gemm with an epilogue (any input type) or an fp8 output. The checks in gemm_fp8's order, then
// the epilogue's: its activation, gated's ldb against 2n columns, an fp8 output's beta and
// c_scales, the bias's alignment and length. k == 0 or alpha == 0 is no shortcut here: the product
// is zero and the epilogue still applies (act(bias), the gated product of the two biases).
void gemm_epi(sgemm::EpiCall c, const Options& opts) {
  check_math(opts.math, c.type);
  const Activation act = c.epi.act;
  if (act != Activation::none && act != Activation::relu && act != Activation::gelu && act != Activation::silu)
    detail::fail_arg("gemm", "opts.epilogue.act", static_cast<int>(act),
                     "Activation::none, Activation::relu, Activation::gelu or Activation::silu");
  detail::check_gemm_shape("gemm", c.ta, c.tb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc);
  const int64_t np = c.np();
  if (c.epi.gated && c.tb == Trans::N && c.ldb < np) {
    std::ostringstream os;
    os << ">= 2n = " << np << " (gated: op(B) is k x 2n, the gate's n columns then the up projection's n)";
    detail::fail_arg("gemm", "ldb", c.ldb, os.str());
  }
  const bool fp8_out = c.c_type == sgemm::EpiOut::e4m3;
  if (fp8_out && c.beta != 0.0f)
    detail::fail_arg("gemm", "beta", c.beta, "0 with an fp8 output (C is quantized from the epilogue's result alone)");
  if (fp8_out && c.m > 0 && c.n > 0 && c.c_scales == nullptr)
    detail::fail_arg("gemm", "c_scales", "nullptr", "a device pointer (an fp8 output, m*n > 0)");
  const size_t bias_elem = c.c_type == sgemm::EpiOut::f32 || fp8_out ? 4 : 2;
  if (reinterpret_cast<uintptr_t>(c.epi.bias) % bias_elem != 0) {
    std::ostringstream os;
    os << "aligned to " << bias_elem << " bytes (the bias is " << np << " values of C's type, "
       << epi_type_name(c.c_type) << ")";
    detail::fail_arg("gemm", "opts.epilogue.bias", c.epi.bias, os.str());
  }
  const bool reads_ab = c.m > 0 && c.n > 0 && c.reads_ab();
  if (c.type == GemmType::fp8) check_scale_args(c.scales, reads_ab);
  const std::string name =
      opts.variant == "auto"
          ? sgemm::auto_epilogue_variant(c.type, c.ta, c.tb, c.m, sgemm::rows_aligned(c.type, c.lda, c.ldb), fp8_out,
                                        c.epi.gated)
          : opts.variant;
  const sgemm::Rung& rung = find_rung(name);
  if (!rung.epi)
    detail::unsupported(rung.name, "does not apply epilogues (bias, activation, gated product, fp8 output): auto does");
  if (c.m == 0 || c.n == 0) return;
  const detail::NvtxRange range("gemm", rung.name);
  detail::check_gemm_pointers("gemm", "a device pointer", c.m, c.n, c.k, c.alpha, c.A, c.B, c.C);
  const int64_t lim = INT_MAX;
  if (c.m > lim || np > lim || c.k > lim) {
    std::ostringstream os;
    os << "m, n (2n when gated), k must each be <= 2^31-1 (got " << c.m << " x " << np << " x " << c.k << ")";
    detail::unsupported(rung.name, os.str());
  }
  detail::require_sm("gemm", rung.name, rung.min_sm);
  if (c.type == GemmType::fp8 && reads_ab) {  // op(B) has np columns: its scales cover them
    int64_t na = 0, nb = 0;
    scale_lengths(c.scales.kind, c.m, np, c.k, na, nb);
    check_scale_length("scales.a", c.scales.a, na, c.scales.kind);
    check_scale_length("scales.b", c.scales.b, nb, c.scales.kind);
  }
  if (c.epi.bias != nullptr)
    check_length("opts.epilogue.bias", c.epi.bias, np, bias_elem, c.epi.gated ? "values (2n: gated)" : "values (n)");
  if (fp8_out)
    check_length("c_scales", c.c_scales, c.m * ((c.n + 127) / 128), sizeof(float), "floats (m x ceil(n/128))");
  c.stream = opts.stream;
  rung.epi(c);
}

}  // namespace

std::string resolve_gemm_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const Options& opts,
                                 GemmType type, int64_t lda, int64_t ldb, Scaling scaling) {
  if (opts.variant != "auto") return find_rung(opts.variant).name;
  if (lda == 0) lda = ta == Trans::N ? k : m;
  if (ldb == 0) ldb = tb == Trans::N ? (opts.epilogue.gated ? 2 * n : n) : k;
  const bool rows_aligned = sgemm::rows_aligned(type, lda, ldb);
  if (sgemm::epilogue::any(opts.epilogue))
    return sgemm::auto_epilogue_variant(type, ta, tb, m, rows_aligned, false, opts.epilogue.gated);
  return sgemm::auto_variant(ta, tb, m, n, k, detail::current_sm(), type, opts.math, rows_aligned, scaling,
                             detail::dram_peak_gbs());
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const Options& opts) {
  gemm_any(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda,
          const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, const Options& opts) {
  gemm_any(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
          const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc, const Options& opts) {
  gemm_any(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts) {
  gemm_f8(ta, tb, m, n, k, alpha, A, lda, B, ldb, scales, beta, C, ldc, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
          const __nv_bfloat16* B, int64_t ldb, __nv_fp8_e4m3* C, int64_t ldc, float* c_scales, const Options& opts) {
  sgemm::EpiCall c{};
  c.type = GemmType::bf16, c.math = opts.math, c.ta = ta, c.tb = tb, c.m = m, c.n = n, c.k = k, c.alpha = alpha;
  c.A = A, c.lda = lda, c.B = B, c.ldb = ldb, c.beta = 0.0f, c.C = C, c.c_type = sgemm::EpiOut::e4m3, c.ldc = ldc;
  c.c_scales = c_scales, c.epi = opts.epilogue;
  gemm_epi(c, opts);
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, __nv_fp8_e4m3* C, int64_t ldc, float* c_scales,
          const Options& opts) {
  sgemm::EpiCall c{};
  c.type = GemmType::fp8, c.math = opts.math, c.ta = ta, c.tb = tb, c.m = m, c.n = n, c.k = k, c.alpha = alpha;
  c.A = A, c.a_type = sgemm::F8::e4m3, c.lda = lda, c.B = B, c.b_type = sgemm::F8::e4m3, c.ldb = ldb;
  c.scales = scales, c.beta = 0.0f, c.C = C, c.c_type = sgemm::EpiOut::e4m3, c.ldc = ldc, c.c_scales = c_scales;
  c.epi = opts.epilogue;
  gemm_epi(c, opts);
}

}  // namespace rungs
