// Rung 06, vectorized: rung 05 with 128-bit global loads and the A tile stored transposed in
// shared memory (article 004 v5/v6, done right: theirs loses the ragged edges and reads past them).
// Per BK = 8 step each thread copies exactly one float4 of op(A) and one of op(B). Which way the
// float4 runs depends on the layout, so the kernel is instantiated per (TA, TB):
//   A (m x k stored): float4 along k, stored transposed into As[kk..kk+3][i];
//   A^T (k x m stored): float4 along m, stored into As[kk][i..i+3] as is;
//   B (k x n stored): float4 along n, stored into Bs[kk][j..j+3] as is;
//   B^T (n x k stored): float4 along k, stored transposed into Bs[kk..kk+3][j].
// The float4 path needs float4_ok(ptr, ld) (checked on the host) and the float4 wholly inside the
// matrix; every other float4 (unaligned pointer, odd ld, ragged edge) is four guarded scalar loads.
// As: [BK][BM] makes a warp's reads of A (4 thread rows, 8 floats apart) hit 4 distinct banks, so
// rung 05's 4-way conflict is gone; Bs reads were conflict-free already. The math is still the
// inner-product form with every operand read from shared memory (volatile, as in rung 05).
// Bounded by: shared-memory load issue, 2 LDS per FMA with no conflicts: 2 warp-LDS per warp-FMA
// against 1 LDS and 4 FMA issues per clock per SM, ~1/8 of fp32 peak. Global loads are 4x fewer
// instructions than rung 05 but were never the limit; registers (64 accumulators) cap it at 2
// blocks (16 warps) per SM.
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::vectorized {

namespace {

constexpr int BM = 128, BN = 128;  // tile of C per block: 16 x 16 threads x (8 x 8) outputs
constexpr int BK = 8;              // k step: 256 float4 of each operand, one per thread
constexpr int TM = 8, TN = 8;      // outputs per thread
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256
// A thread's 8 columns: two chunks of 4, BN/2 apart (as in rung 05), so a warp reads 32 consecutive
// floats of a Bs row.
constexpr int kChunk = 4, kChunkStride = BN / 2;
static_assert(kThreads == 256 && (BN / TN) * kChunk == kChunkStride, "16 x 16 threads, two chunks of 4 columns");
static_assert(BK * BM / 4 == kThreads && BK * BN / 4 == kThreads, "one float4 of each operand per thread");

template <bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    vectorized_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda,
                      bool vec_a, const float* __restrict__ B, int64_t ldb, bool vec_b, float beta,
                      float* __restrict__ C, int64_t ldc, int tiles_n) {
  __shared__ __align__(16) float As[BK][BM];  // As: [BK][BM], As[kk][i] = op(A)(m0 + i, k0 + kk) (transposed)
  __shared__ __align__(16) float Bs[BK][BN];  // Bs: [BK][BN], Bs[kk][j] = op(B)(k0 + kk, n0 + j)
  const int b = static_cast<int>(blockIdx.x);
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
  const int tid = threadIdx.x;
  const detail::ThreadRC t = detail::thread_rc_16x16_warp4x8(tid);  // rows t.row * TM + i
  const volatile float* as = &As[0][0];  // volatile: every read below is a real LDS (see rung 05)
  const volatile float* bs = &Bs[0][0];
  float acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // A^T is contiguous along m (X_CONTIG), A along k; B is contiguous along n, B^T along k.
    detail::load_kslab_vec4<BK, BM, kThreads, TA>(&As[0][0], A, lda, vec_a, m0, k0, m, k, tid);
    detail::load_kslab_vec4<BK, BN, kThreads, !TB>(&Bs[0][0], B, ldb, vec_b, n0, k0, n, k, tid);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int col = (j / kChunk) * kChunkStride + t.col * kChunk + j % kChunk;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk)
          acc[i][j] = fmaf(as[kk * BM + t.row * TM + i], bs[kk * BN + col], acc[i][j]);
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
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "vectorized");
  const bool vec_a = detail::float4_ok(a.A, a.lda), vec_b = detail::float4_ok(a.B, a.ldb);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    vectorized_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, kThreads, 0, a.stream>>>(
        a.m, a.n, a.k, a.alpha, a.A, a.lda, vec_a, a.B, a.ldb, vec_b, a.beta, a.C, a.ldc, static_cast<int>(tiles_n));
  });
  detail::check_launch("vectorized");
}

}  // namespace rungs::sgemm::vectorized
