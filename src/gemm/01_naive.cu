// Rung 01, naive: one thread per element of C (a 32 x 32 thread block per 32 x 32 tile of C), the
// whole k loop read straight from global memory. threadIdx.x walks the ROWS of C on purpose (article
// 004 v1's mapping): with op(A) = A the 32 lanes of a warp read 32 different rows of A (32 sectors
// fetched for 128 useful bytes), all read the same element of B, and write a column of C with stride
// ldc. This is the baseline every later rung improves on.
// Bounded by: global load transactions. Each FMA costs a warp one A load touching 32 sectors (1/8 of
// every 32-byte sector used) plus a broadcast B load; at roughly 4 sectors per clock per SM from L1
// that is ~8 clocks per warp-FMA against 4 warp-FMAs per clock of fp32 peak: a few % of peak at best,
// less once A's rows fall out of L1. No data is reused on chip except by cache luck.
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::naive {

namespace {

constexpr int kTile = 32;  // 32 x 32 = 1024 threads, the largest block; one tile of C per block

__global__ void __launch_bounds__(kTile * kTile)
    naive_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda, bool ta,
                 const float* __restrict__ B, int64_t ldb, bool tb, float beta, float* __restrict__ C, int64_t ldc,
                 int tiles_n) {
  const int b = static_cast<int>(blockIdx.x);  // tile_grid keeps it <= INT_MAX
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  // threadIdx.x -> row (uncoalesced on purpose), threadIdx.y -> column.
  const int64_t row = int64_t(tile_m) * kTile + threadIdx.x;
  const int64_t col = int64_t(tile_n) * kTile + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    acc = fmaf(detail::op_at(A, lda, ta, row, p), detail::op_at(B, ldb, tb, p, col), acc);
  detail::epilogue_store(C, ldc, row, col, acc, alpha, beta);
}

}  // namespace

void run(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, kTile), tiles_n = detail::ceil_div(a.n, kTile);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "naive");
  naive_kernel<<<grid, dim3(kTile, kTile), 0, a.stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda, a.ta == Trans::T, a.B,
                                                          a.ldb, a.tb == Trans::T, a.beta, a.C, a.ldc,
                                                          static_cast<int>(tiles_n));
  detail::check_launch("naive");
}

}  // namespace rungs::sgemm::naive
