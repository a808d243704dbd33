// CPU references for gemm: an fp64, blocked, multi-threaded one that the tests and
// `rungs verify` compare against, and the seed articles' serial float loop.
#include <rungs/reference.hpp>

#include <algorithm>
#include <thread>
#include <vector>

namespace rungs::reference {

namespace {
inline float at(const float* p, int64_t ld, bool trans, int64_t r, int64_t c) {
  return trans ? p[c * ld + r] : p[r * ld + c];
}
}  // namespace

void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, double alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, double beta, double* C, int64_t ldc, int threads) {
  if (m <= 0 || n <= 0) return;
  if (k == 0 || alpha == 0.0) {  // BLAS: the empty product reads neither A nor B
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta == 0.0 ? 0.0 : beta * C[i * ldc + j];
    return;
  }
  const bool at_ = ta == Trans::T, bt_ = tb == Trans::T;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Each worker owns a band of rows of C. For cache reuse, op(B) is packed once into a dense
  // k x n double panel (row-major) and op(A)'s row is unpacked per row; the inner loop then
  // streams one row of the panel: c[j] += a_ip * b[p][j] (fp64, i-p-j order).
  std::vector<double> Bp(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) Bp[static_cast<size_t>(p * n + j)] = at(B, ldb, bt_, p, j);
  auto work = [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(static_cast<size_t>(n));
    for (int64_t i = r0; i < r1; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double a = at(A, lda, at_, i, p);
        const double* b = &Bp[static_cast<size_t>(p * n)];
        for (int64_t j = 0; j < n; ++j) acc[j] += a * b[j];
      }
      double* c = C + i * ldc;
      for (int64_t j = 0; j < n; ++j) c[j] = beta == 0.0 ? alpha * acc[j] : alpha * acc[j] + beta * c[j];
    }
  };
  const int64_t nt = std::min<int64_t>(threads, m);
  std::vector<std::thread> pool;
  const int64_t band = (m + nt - 1) / nt;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t r0 = t * band, r1 = std::min(m, r0 + band);
    if (r0 < r1) pool.emplace_back(work, r0, r1);
  }
  for (auto& th : pool) th.join();
}

void gemm_naive_fp32(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                     int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const bool at_ = ta == Trans::T, bt_ = tb == Trans::T;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += at(A, lda, at_, i, p) * at(B, ldb, bt_, p, j);
      float* c = C + i * ldc + j;
      *c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
    }
}

}  // namespace rungs::reference
