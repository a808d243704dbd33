// rungs::gemm: argument checking, the k == 0 / alpha == 0 shortcut, variant lookup and
// the `auto` choice. Every rung is reached through here, the CLI and the tests included.
// One checking path for every element type: gemm_any<T> below; the type and math mode pick
// which of a rung's entry points runs (a null one is rungs::Unsupported).
#include "core/errors.hpp"
#include "core/nvtx.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/tuning.hpp"

#include <climits>
#include <sstream>

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
                (type == GemmType::f16 ? "__half" : "__nv_bfloat16") +
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

template <typename T>
void gemm_any(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, float beta, T* C, int64_t ldc, const Options& opts) {
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

}  // namespace

std::string resolve_gemm_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const Options& opts,
                                 GemmType type, int64_t lda, int64_t ldb) {
  if (opts.variant != "auto") return find_rung(opts.variant).name;
  const int64_t elem = type == GemmType::f32 ? 4 : 2;
  if (lda == 0) lda = ta == Trans::N ? k : m;
  if (ldb == 0) ldb = tb == Trans::N ? n : k;
  const bool rows_aligned = (lda * elem) % 16 == 0 && (ldb * elem) % 16 == 0;
  return sgemm::auto_variant(ta, tb, m, n, k, detail::current_sm(), type, opts.math, rows_aligned);
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

}  // namespace rungs
