// Rung 02, coalesced: rung 01 with the thread mapping turned around, threadIdx.x walks the COLUMNS
// of C. With op(B) = B a warp now reads 32 consecutive elements of one row of B (4 sectors, all
// bytes used), one broadcast element of A, and writes 128 contiguous bytes of a row of C. (With
// op(B) = B^T the strided side moves to B; staging through shared memory in rung 03 fixes that for
// every layout.)
// Bounded by: L1/L2 load throughput. Still 2 global loads (8 bytes) per FMA with no on-chip reuse
// beyond the caches: ~2 L1 requests per warp-FMA against 4 warp-FMAs per clock of fp32 peak caps it
// near 1/8 of peak, and in practice lower as B's columns stream through L2 once per row tile.
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::coalesced {

namespace {

constexpr int kTile = 32;  // one warp per row of a 32 x 32 tile of C; 1024 threads per block

__global__ void __launch_bounds__(kTile * kTile)
    coalesced_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda, bool ta,
                     const float* __restrict__ B, int64_t ldb, bool tb, float beta, float* __restrict__ C,
                     int64_t ldc, int tiles_n) {
  const int b = static_cast<int>(blockIdx.x);  // tile_grid keeps it <= INT_MAX
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  // threadIdx.x -> column (a warp covers 32 consecutive columns of one row), threadIdx.y -> row.
  const int64_t row = int64_t(tile_m) * kTile + threadIdx.y;
  const int64_t col = int64_t(tile_n) * kTile + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    acc = fmaf(detail::op_at(A, lda, ta, row, p), detail::op_at(B, ldb, tb, p, col), acc);
  detail::epilogue_store(C, ldc, row, col, acc, alpha, beta);
}

}  // namespace

void run(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, kTile), tiles_n = detail::ceil_div(a.n, kTile);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "coalesced");
  coalesced_kernel<<<grid, dim3(kTile, kTile), 0, a.stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda, a.ta == Trans::T,
                                                              a.B, a.ldb, a.tb == Trans::T, a.beta, a.C, a.ldc,
                                                              static_cast<int>(tiles_n));
  detail::check_launch("coalesced");
}

}  // namespace rungs::sgemm::coalesced
