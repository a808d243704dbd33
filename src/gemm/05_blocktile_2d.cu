// Rung 05, blocktile_2d: rung 04 blocked in two dimensions. A 128 x 128 tile of C per block of 256
// threads, each thread an 8 x 8 tile of outputs (8 rows x two 4-column chunks, see below), BK = 8.
// The copy uses a rearranged 1D thread index (article 004 v3/v4): the 256 threads walk each tile
// as a flat array, 4 elements of op(A) and 4 of op(B) per thread, along storage rows so reads
// coalesce for every transpose. Global data is now reused 128 times per load (vs 64 in rung 04).
// The math is deliberately the INNER-PRODUCT form: for each (i, j) of the thread tile,
// acc[i][j] += As[row_i][kk] * Bs[kk][col_j] with both operands read from shared memory every
// time. The reads go through volatile pointers so the compiler cannot merge the 8x repeated loads
// of the fully unrolled loops by itself; keeping them in registers is rung 07's step.
// Bounded by: shared-memory reads. 2 LDS per FMA, and As: [BM][BK] read down a column: a warp's 4
// thread rows sit 8 rows = 64 floats apart, the same bank, a 4-way conflict (rung 06 stores As
// transposed to remove it). ~5 shared wavefronts per warp-FMA against 4 FMA issues per clock per SM:
// ~1/20 of fp32 peak, slower than rung 04 despite the bigger tiles; the tiles pay off from rung 07.
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::blocktile_2d {

namespace {

constexpr int BM = 128, BN = 128;  // tile of C per block: 16 x 16 threads x (8 x 8) outputs
constexpr int BK = 8;              // k step: 1024 elements of each operand, 4 per thread
constexpr int TM = 8, TN = 8;      // outputs per thread
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256
// Column chunks: a thread's 8 columns are col * 4 + 0..3 and BN/2 + col * 4 + 0..3, so a warp's 8
// thread columns read 8 x 4 consecutive floats of a Bs row (32 banks) rather than 8 floats apart.
constexpr int kChunk = 4, kChunkStride = BN / 2;
// Bs row stride 132 (= 4 mod 32): with op(B) = B^T the copy's warp covers 8 k rows x 4 columns and
// lands in 32 distinct banks. As is left unpadded: its column reads conflict, the point of rung 06.
constexpr int kLdB = BN + 4;
static_assert(kThreads == 256 && (BN / TN) * kChunk == kChunkStride, "16 x 16 threads, two chunks of 4 columns");

template <bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    blocktile_2d_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda,
                        const float* __restrict__ B, int64_t ldb, float beta, float* __restrict__ C, int64_t ldc,
                        int tiles_n) {
  __shared__ float As[BM][BK];   // As: [BM][BK], As[i][kk] = op(A)(m0 + i, k0 + kk)
  __shared__ float Bs[BK][kLdB];  // Bs: [BK][BN+4], Bs[kk][j] = op(B)(k0 + kk, n0 + j)
  const int b = static_cast<int>(blockIdx.x);
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
  const int tid = threadIdx.x;
  const detail::ThreadRC t = detail::thread_rc_16x16_warp4x8(tid);  // rows t.row * TM + i
  const volatile float* as = &As[0][0];  // volatile: every read below is a real LDS (see header)
  const volatile float* bs = &Bs[0][0];
  float acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    detail::load_tile_guarded<BM, BK, kThreads, BK, 1>(&As[0][0], A, lda, TA, m0, k0, m, k, tid);
    detail::load_tile_guarded<BK, BN, kThreads, kLdB, 1>(&Bs[0][0], B, ldb, TB, k0, n0, k, n, tid);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int col = (j / kChunk) * kChunkStride + t.col * kChunk + j % kChunk;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk)
          acc[i][j] = fmaf(as[(t.row * TM + i) * BK + kk], bs[kk * kLdB + col], acc[i][j]);
      }
    }
    __syncthreads();  // the next step's copy overwrites the tiles
  }
  detail::store_acc_tile<TM, TN, kChunk, kChunkStride>(C, ldc, m, n, m0 + t.row * TM, n0 + t.col * kChunk, acc,
                                                       alpha, beta);
}

}  // namespace

void run(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, BM), tiles_n = detail::ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "blocktile_2d");
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, kThreads, 0, a.stream>>>(
        a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C, a.ldc, static_cast<int>(tiles_n));
  });
  detail::check_launch("blocktile_2d");
}

}  // namespace rungs::sgemm::blocktile_2d
