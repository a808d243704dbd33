// Rung 03, smem_tiling: rung 02 with the k loop cut into 32-wide steps. Per step the block's 1024
// threads copy a 32 x 32 tile of op(A) and of op(B) into shared memory (one element each, zero fill
// outside the matrices), sync, and every thread runs 32 FMAs out of shared memory (article 001,
// article 004 v2). Each element fetched from global memory is now used 32 times, and because the
// copy's thread mapping is free of the compute mapping, the copy reads along storage rows for all
// four transposes (coalesced), which rung 02 could not do for op(B) = B^T.
// Bounded by: shared-memory load issue. Every FMA needs 2 LDS (a broadcast of As and a 128-byte
// row of Bs per warp): 2 warp-LDS per warp-FMA against 1 LDS and 4 FMA warp-instructions per clock
// per SM caps it at ~1/8 of fp32 peak. Global traffic fell 16x (2 loads per 32 FMAs per thread).
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::smem_tiling {

namespace {

// 32: one warp per row of the tile, so a warp's Bs read is 32 consecutive banks and its As read is
// a broadcast; 32 x 32 = 1024 threads, the largest block.
constexpr int kTile = 32;
// Row stride of both tiles: 33, coprime with the 32 banks, so the transposed copies (lanes walking
// down a tile column) store conflict-free; the compute reads are unaffected.
constexpr int kLds = kTile + 1;

__global__ void __launch_bounds__(kTile * kTile)
    smem_tiling_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda,
                       bool ta, const float* __restrict__ B, int64_t ldb, bool tb, float beta, float* __restrict__ C,
                       int64_t ldc, int tiles_n) {
  __shared__ float As[kTile][kLds];  // As: [32][33], As[i][kk] = op(A)(m0 + i, k0 + kk)
  __shared__ float Bs[kTile][kLds];  // Bs: [32][33], Bs[kk][j] = op(B)(k0 + kk, n0 + j)
  const int b = static_cast<int>(blockIdx.x);
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  const int64_t m0 = int64_t(tile_m) * kTile, n0 = int64_t(tile_n) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int64_t row = m0 + ty, col = n0 + tx;  // this thread's element of C
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += kTile) {
    detail::load_tile_guarded<kTile, kTile, kTile * kTile, kLds, 1>(&As[0][0], A, lda, ta, m0, k0, m, k, tid);
    detail::load_tile_guarded<kTile, kTile, kTile * kTile, kLds, 1>(&Bs[0][0], B, ldb, tb, k0, n0, k, n, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();  // the next step's copy overwrites the tiles
  }
  if (row < m && col < n) detail::epilogue_store(C, ldc, row, col, acc, alpha, beta);
}

}  // namespace

void run(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, kTile), tiles_n = detail::ceil_div(a.n, kTile);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "smem_tiling");
  smem_tiling_kernel<<<grid, dim3(kTile, kTile), 0, a.stream>>>(a.m, a.n, a.k, a.alpha, a.A, a.lda,
                                                                a.ta == Trans::T, a.B, a.ldb, a.tb == Trans::T,
                                                                a.beta, a.C, a.ldc, static_cast<int>(tiles_n));
  detail::check_launch("smem_tiling");
}

}  // namespace rungs::sgemm::smem_tiling
