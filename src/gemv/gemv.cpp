// rungs::gemv: argument checking, the empty-product / alpha == 0 shortcut, variant lookup
// and the `auto` choice. Every rung is reached through here, the CLI and the tests included.
#include "core/errors.hpp"
#include "core/nvtx.hpp"
#include "gemv/gemv_rung.hpp"

#include <climits>
#include <sstream>

namespace rungs {

namespace {

const sgemv::Rung& find_gemv_rung(const std::string& name) {
  return detail::find_rung(sgemv::ladder(), "gemv", name);
}

}  // namespace

std::string resolve_gemv_variant(Trans trans, int64_t m, int64_t n, const Options& opts) {
  if (opts.variant != "auto") return find_gemv_rung(opts.variant).name;
  return sgemv::auto_variant(trans, m, n, detail::current_sm());
}

void gemv(Trans trans, int64_t m, int64_t n, float alpha, const float* A, int64_t lda, const float* x, int64_t incx,
          float beta, float* y, int64_t incy, const Options& opts) {
  if (opts.math != Math::fp32)
    throw Error("rungs::gemv: math must be Math::fp32 (tf32 modes apply to the tensor-core gemm only)");
  detail::refuse_epilogue("gemv", opts);
  if (m < 0) detail::fail_arg("gemv", "m", m, ">= 0");
  if (n < 0) detail::fail_arg("gemv", "n", n, ">= 0");
  if (lda < (n > 1 ? n : 1)) detail::fail_arg("gemv", "lda", lda, ">= max(1, " + std::to_string(n) + ")");
  if (incx <= 0) detail::fail_arg("gemv", "incx", incx, "> 0");
  if (incy <= 0) detail::fail_arg("gemv", "incy", incy, "> 0");
  const std::string name = opts.variant == "auto" ? resolve_gemv_variant(trans, m, n, opts) : opts.variant;
  const sgemv::Rung& rung = find_gemv_rung(name);
  const int64_t out_len = trans == Trans::N ? m : n;
  const int64_t dot_len = trans == Trans::N ? n : m;
  if (out_len == 0) return;
  const detail::NvtxRange range("gemv", rung.name);  // "rungs::gemv/<rung>" on a profiler's timeline
  if (y == nullptr) detail::fail_arg("gemv", "y", "nullptr", "a device pointer (y is not empty)");
  const bool reads_ax = dot_len > 0 && alpha != 0.0f;
  if (reads_ax && A == nullptr) detail::fail_arg("gemv", "A", "nullptr", "a device pointer (m*n > 0, alpha != 0)");
  if (reads_ax && x == nullptr) detail::fail_arg("gemv", "x", "nullptr", "a device pointer (m*n > 0, alpha != 0)");
  if (m > INT_MAX || n > INT_MAX) {
    std::ostringstream os;
    os << "m and n must each be <= 2^31-1 (got " << m << " x " << n << ")";
    detail::unsupported(rung.name, os.str());
  }
  detail::require_sm("gemv", rung.name, rung.min_sm);
  if (!reads_ax) {  // y = beta * y: BLAS semantics, A and x are not read
    sgemv::scale_y(out_len, beta, y, incy, opts.stream);
    return;
  }
  const sgemv::Args args{trans, m, n, alpha, A, lda, x, incx, beta, y, incy, opts.stream};
  rung.run(args);
}

}  // namespace rungs
