// Rung 04, blocktile_1d: rung 03 with more work per thread. Each thread computes TM = 8 outputs of
// one column of a 64 x 64 tile of C: per k it reads the B value once into a register and uses it
// for 8 FMAs against 8 A values (article 004 v3's register blocking, one dimension). Blocks are
// 512 threads over BM x BN = 64 x 64 with BK = 8, so each step copies exactly one element of op(A)
// and one of op(B) per thread; global data is reused 64 times per load instead of 32.
// Bounded by: the copy, no longer shared memory. Each loaded element feeds only 32 FMAs (64 x 64
// tile, 2 x 512 loads per 32768 FMAs): at fp32 peak that is 16 bytes per clock per SM from L2,
// ~3.5 TB/s over an H100, at the edge of what L2 delivers; and every BK = 8 step exposes the
// global-load latency behind a barrier with just 8 FMAs per thread per k to cover it (60 registers
// x 512 threads: 2 blocks = 32 warps per SM). Shared reads are cheap here: a thread's 8 x 8 block
// of As is the same for the whole warp, and the compiler fetches it as 18 broadcast LDS.128, so a
// step costs 26 LDS per 64 FMAs (rung 03: 64 per 32).
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::blocktile_1d {

namespace {

constexpr int BM = 64, BN = 64;  // tile of C per block
constexpr int BK = 8;            // k step: BM * BK = BK * BN = kThreads, one element of each per thread
constexpr int TM = 8;            // outputs per thread, down one column
constexpr int kThreads = (BM / TM) * BN;  // 512
// As row stride 9 (coprime with 32): with op(A) = A^T the copy's lanes walk down the m direction and
// store conflict-free; compute reads of As are warp-wide broadcasts, so padding costs them nothing.
constexpr int kLdA = BK + 1;
// Bs row stride 68 (= 4 mod 32): with op(B) = B^T a warp's copy covers 8 k rows x 4 columns and
// lands in 32 distinct banks; compute reads of a Bs row stay consecutive.
constexpr int kLdB = BN + 4;
static_assert(BM * BK == kThreads && BK * BN == kThreads, "one element of each tile per thread");

template <bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    blocktile_1d_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda,
                        const float* __restrict__ B, int64_t ldb, float beta, float* __restrict__ C, int64_t ldc,
                        int tiles_n) {
  __shared__ float As[BM][kLdA];  // As: [BM][BK+1], As[i][kk] = op(A)(m0 + i, k0 + kk)
  __shared__ float Bs[BK][kLdB];  // Bs: [BK][BN+4], Bs[kk][j] = op(B)(k0 + kk, n0 + j)
  const int b = static_cast<int>(blockIdx.x);
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
  const int tid = threadIdx.x;
  const int tcol = tid % BN;  // this thread's column of the tile: a warp covers 32 consecutive columns
  const int trow = tid / BN;  // this thread's group of TM rows: rows trow * TM .. + TM - 1
  float acc[TM][1] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    detail::load_tile_guarded<BM, BK, kThreads, kLdA, 1>(&As[0][0], A, lda, TA, m0, k0, m, k, tid);
    detail::load_tile_guarded<BK, BN, kThreads, kLdB, 1>(&Bs[0][0], B, ldb, TB, k0, n0, k, n, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float bv = Bs[kk][tcol];  // cached in a register, used TM times
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i][0] = fmaf(As[trow * TM + i][kk], bv, acc[i][0]);
    }
    __syncthreads();  // the next step's copy overwrites the tiles
  }
  detail::store_acc_tile<TM, 1, 1, 1>(C, ldc, m, n, m0 + trow * TM, n0 + tcol, acc, alpha, beta);
}

}  // namespace

void run(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, BM), tiles_n = detail::ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "blocktile_1d");
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, kThreads, 0, a.stream>>>(
        a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C, a.ldc, static_cast<int>(tiles_n));
  });
  detail::check_launch("blocktile_1d");
}

}  // namespace rungs::sgemm::blocktile_1d
