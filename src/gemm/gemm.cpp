// rungs::gemm: argument checking, the k == 0 / alpha == 0 shortcut, variant lookup and
// the `auto` choice. Every rung is reached through here, the CLI and the tests included.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/tuning.hpp"

#include <climits>
#include <sstream>

namespace rungs {

namespace {

void check_ld(const char* arg, int64_t ld, int64_t row_len) {
  const int64_t need = row_len > 1 ? row_len : 1;
  if (ld < need) detail::fail_arg("gemm", arg, ld, ">= max(1, " + std::to_string(row_len) + ")");
}

const sgemm::Rung& find_rung(const std::string& name) {
  return detail::find_rung(sgemm::ladder(), "gemm", name);
}

void check_math(Math math) {
  if (math != Math::fp32)
    throw Error(std::string("rungs::gemm: math = ") + (math == Math::tf32 ? "tf32" : "tf32x3") +
                " is not available yet (it arrives with the tensor-core ladder); use Math::fp32");
}

}  // namespace

std::string resolve_gemm_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const Options& opts) {
  if (opts.variant != "auto") return find_rung(opts.variant).name;
  return sgemm::auto_variant(ta, tb, m, n, k, detail::current_sm());
}

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const Options& opts) {
  check_math(opts.math);
  if (m < 0) detail::fail_arg("gemm", "m", m, ">= 0");
  if (n < 0) detail::fail_arg("gemm", "n", n, ">= 0");
  if (k < 0) detail::fail_arg("gemm", "k", k, ">= 0");
  // Stored shapes: A is m x k (N) or k x m (T); B is k x n (N) or n x k (T); C is m x n.
  check_ld("lda", lda, ta == Trans::N ? k : m);
  check_ld("ldb", ldb, tb == Trans::N ? n : k);
  check_ld("ldc", ldc, n);
  // Resolve the variant before the early returns so a bad name always throws.
  const std::string name = opts.variant == "auto" ? resolve_gemm_variant(ta, tb, m, n, k, opts) : opts.variant;
  const sgemm::Rung& rung = find_rung(name);
  if (m == 0 || n == 0) return;
  if (C == nullptr) detail::fail_arg("gemm", "C", "nullptr", "a device pointer (m*n > 0)");
  const bool reads_ab = k > 0 && alpha != 0.0f;
  if (reads_ab && A == nullptr) detail::fail_arg("gemm", "A", "nullptr", "a device pointer (k > 0, alpha != 0)");
  if (reads_ab && B == nullptr) detail::fail_arg("gemm", "B", "nullptr", "a device pointer (k > 0, alpha != 0)");
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
  sgemm::Args args{ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts.stream};
  rung.run(args);
}

}  // namespace rungs
