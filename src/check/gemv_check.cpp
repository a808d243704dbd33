// One definition of "correct" for gemv: the data, the fp64 reference and the tolerances.
//
// A gemv output is one dot product of length k = dot_len (plus the alpha scaling and the beta
// term), so gemm's derivation applies unchanged with k = dot_len (see gemm_check.cpp):
//  * element-wise |y - ref| <= (k + 4) u mag, u = 2^-24, mag = |alpha||op(A)||x| + |beta||y0|:
//    rigorous for any summation order (split-K, shuffles, vector lanes), the 4 covering the
//    alpha product, the beta product, the final add and a partial-sum combine;
//  * normwise ||y - ref||_2 / ||ref||_2 <= 4 u sqrt(k + 2): rounding errors add like a random
//    walk, and this is what catches a tf32-rounded input or a dropped term at large k.
// The reference itself sums exact fp32 products in fp64: its error (k 2^-53 mag) is 2^-29 of
// the tolerance. Stride gaps of y must keep their bits: a rung may not write between elements.
#include "check/gemv_check.hpp"

#include "check/host_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>

namespace rungs::check {

namespace {

using util::draw;
using util::hw_threads;

// f(lo, hi) over [0, n) in up to `threads` contiguous chunks, each on its own thread.
template <typename F>
void parallel_chunks(int64_t n, int64_t threads, F f) {
  util::parallel_chunks(n, threads, [&f](int64_t, int64_t lo, int64_t hi) { f(lo, hi); });
}

// Threads worth starting for `work` multiply-adds (one thread below ~256K).
int64_t threads_for(double work) {
  return std::max<int64_t>(1, std::min<int64_t>(hw_threads(), static_cast<int64_t>(work / 262144.0) + 1));
}

bool same_bits_or_both_nan(float a, float b) {
  uint32_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  return ua == ub || (std::isnan(a) && std::isnan(b));
}

}  // namespace

GemvShape normalized(GemvShape s) {
  if (s.lda == 0) s.lda = std::max<int64_t>(1, s.n);
  return s;
}
int64_t gemv_out_len(const GemvShape& s) { return s.trans == Trans::N ? s.m : s.n; }
int64_t gemv_dot_len(const GemvShape& s) { return s.trans == Trans::N ? s.n : s.m; }
int64_t gemv_a_elems(const GemvShape& s) {
  return s.m > 0 && s.n > 0 ? (s.m - 1) * normalized(s).lda + s.n : 0;
}
int64_t gemv_x_elems(const GemvShape& s) {
  const int64_t len = gemv_dot_len(s);
  return len > 0 ? (len - 1) * s.incx + 1 : 0;
}
int64_t gemv_y_elems(const GemvShape& s) {
  const int64_t len = gemv_out_len(s);
  return len > 0 ? (len - 1) * s.incy + 1 : 0;
}

GemvData make_gemv_data(const GemvShape& s0, uint64_t seed) {
  const GemvShape s = normalized(s0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  GemvData d;
  d.A.assign(static_cast<size_t>(gemv_a_elems(s)), nan);
  if (!d.A.empty())
    parallel_chunks(s.m, threads_for(static_cast<double>(s.m) * s.n / 8), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r)
        for (int64_t c = 0; c < s.n; ++c) d.A[r * s.lda + c] = draw(seed, 1, static_cast<uint64_t>(r * s.n + c));
    });
  d.x.assign(static_cast<size_t>(gemv_x_elems(s)), nan);
  for (int64_t j = 0; j < gemv_dot_len(s); ++j) d.x[j * s.incx] = draw(seed, 2, static_cast<uint64_t>(j));
  d.y0.assign(static_cast<size_t>(gemv_y_elems(s)), nan);
  for (int64_t i = 0; i < gemv_out_len(s); ++i) d.y0[i * s.incy] = draw(seed, 3, static_cast<uint64_t>(i));
  return d;
}

GemvReference gemv_reference(const GemvShape& s0, const GemvData& d) {
  const GemvShape s = normalized(s0);
  const int64_t out = gemv_out_len(s), dot = gemv_dot_len(s);
  GemvReference r;
  r.ref.assign(static_cast<size_t>(out), 0.0);
  r.mag.assign(static_cast<size_t>(out), 0.0);
  if (out == 0) return r;
  const bool reads_ax = dot > 0 && s.alpha != 0.0f;  // BLAS: otherwise A and x are not read
  std::vector<double> acc(static_cast<size_t>(out), 0.0), mag(static_cast<size_t>(out), 0.0);
  if (reads_ax) {
    // x packed once, dense, in double.
    std::vector<double> xd(static_cast<size_t>(dot)), xa(static_cast<size_t>(dot));
    for (int64_t j = 0; j < dot; ++j) xd[j] = d.x[j * s.incx], xa[j] = std::fabs(xd[j]);
    const int64_t threads = threads_for(static_cast<double>(out) * dot);
    const float* A = d.A.data();
    if (s.trans == Trans::N) {
      // y_i = A[i, :] . x: one row per output, 4 independent partial sums per row.
      parallel_chunks(out, threads, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          const float* row = A + i * s.lda;
          double s0 = 0, s1 = 0, s2 = 0, s3 = 0, m0 = 0, m1 = 0, m2 = 0, m3 = 0;
          int64_t j = 0;
          for (; j + 4 <= dot; j += 4) {
            const double a0 = row[j], a1 = row[j + 1], a2 = row[j + 2], a3 = row[j + 3];
            s0 += a0 * xd[j], s1 += a1 * xd[j + 1], s2 += a2 * xd[j + 2], s3 += a3 * xd[j + 3];
            m0 += std::fabs(a0) * xa[j], m1 += std::fabs(a1) * xa[j + 1];
            m2 += std::fabs(a2) * xa[j + 2], m3 += std::fabs(a3) * xa[j + 3];
          }
          for (; j < dot; ++j) {
            const double a = row[j];
            s0 += a * xd[j], m0 += std::fabs(a) * xa[j];
          }
          acc[i] = (s0 + s1) + (s2 + s3);
          mag[i] = (m0 + m1) + (m2 + m3);
        }
      });
    } else {
      // y_j = sum_i A[i, j] x_i: stream the rows of A, accumulating a stretch of columns.
      auto rows_into = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, double* a, double* g) {
        for (int64_t i = r0; i < r1; ++i) {
          const float* row = A + i * s.lda;
          const double xi = xd[i], xai = xa[i];
          for (int64_t j = c0; j < c1; ++j) {
            const double v = row[j];
            a[j - c0] += v * xi;
            g[j - c0] += std::fabs(v) * xai;
          }
        }
      };
      if (threads == 1 || out >= 64 * threads) {  // enough columns: each thread owns a stretch of them
        parallel_chunks(out, threads, [&](int64_t lo, int64_t hi) { rows_into(0, dot, lo, hi, &acc[lo], &mag[lo]); });
      } else {  // few, long columns: each thread sums a stretch of rows; partials added in a fixed order
        const int64_t parts = std::min(threads, dot);
        std::vector<std::vector<double>> pa(static_cast<size_t>(parts)), pg(static_cast<size_t>(parts));
        const int64_t chunk = (dot + parts - 1) / parts;
        parallel_chunks(parts, parts, [&](int64_t lo, int64_t hi) {
          for (int64_t p = lo; p < hi; ++p) {
            pa[p].assign(static_cast<size_t>(out), 0.0);
            pg[p].assign(static_cast<size_t>(out), 0.0);
            rows_into(p * chunk, std::min(dot, (p + 1) * chunk), 0, out, pa[p].data(), pg[p].data());
          }
        });
        for (int64_t p = 0; p < parts; ++p)
          for (int64_t j = 0; j < out; ++j) acc[j] += pa[p][j], mag[j] += pg[p][j];
      }
    }
  }
  const double alpha = s.alpha, beta = s.beta;
  for (int64_t i = 0; i < out; ++i) {
    const double y0 = beta == 0.0 ? 0.0 : static_cast<double>(d.y0[i * s.incy]);
    r.ref[i] = (reads_ax ? alpha * acc[i] : 0.0) + (beta == 0.0 ? 0.0 : beta * y0);
    r.mag[i] = (reads_ax ? std::fabs(alpha) * mag[i] : 0.0) + (beta == 0.0 ? 0.0 : std::fabs(beta) * std::fabs(y0));
  }
  return r;
}

GemmErrors compare_gemv(const GemvShape& s0, const GemvReference& r, const float* y_stored, const float* y0_stored) {
  const GemvShape s = normalized(s0);
  const int64_t out = gemv_out_len(s), k = gemv_dot_len(s);
  GemmErrors e;
  const double gamma = elementwise_gamma(k), tol = normwise_tolerance(k);
  ErrorTally tally(e, gamma);
  for (int64_t i = 0; i < out; ++i) tally.add(r.ref[i], r.mag[i], y_stored[i * s.incy]);
  const int64_t over_bound = tally.finish();
  int64_t gaps_written = 0, first_gap = -1;
  if (y0_stored && s.incy > 1)
    for (int64_t p = 0; p < gemv_y_elems(s); ++p)
      if (p % s.incy != 0 && !same_bits_or_both_nan(y_stored[p], y0_stored[p])) {
        if (first_gap < 0) first_gap = p;
        ++gaps_written;
      }
  std::ostringstream why;
  if (e.bad) why << e.bad << " element(s) non-finite where the reference is not (or unwritten); ";
  if (over_bound)
    why << over_bound << " element(s) beyond the (k+4)u mag bound, k = " << k << " (worst " << e.bound_ratio
        << "x); ";
  if (e.normwise > tol) why << "normwise error " << e.normwise << " > tolerance " << tol << "; ";
  if (gaps_written)
    why << gaps_written << " element(s) in the stride gaps of y (incy = " << s.incy
        << ") changed, the first at stored index " << first_gap << "; ";
  e.reason = why.str();
  e.pass = e.reason.empty();
  return e;
}

}  // namespace rungs::check
