// Rung 07, outer_product: rung 06 with register fragments (article 004 v7, "inner product to outer
// product"). Per k step a thread loads its TM = 8 values of A (As[kk][row*8 .. +7]) and TN = 8 values
// of B (two chunks of 4 in Bs[kk][..]) into registers with four 128-bit shared loads, then does the
// 8 x 8 outer product: 64 FMAs per 4 LDS.128 instead of rung 06's 64 FMAs per 128 scalar LDS.
// Global copy and layouts are rung 06's (float4 when float4_ok and wholly inside, guarded scalars
// otherwise; kernel instantiated per (TA, TB)).
// Conflicts: each quarter-warp (8 lanes) of an LDS.128 shares one address of As (broadcast) and reads
// 8 x 16 = 128 contiguous bytes of Bs: one wavefront each.
// Bounded by: no longer shared memory (~12 wavefronts per 64 warp-FMAs, i.e. ~16 FMA clocks: about
// 3/4 of the LDS pipe). Now the k loop's copy -> __syncthreads -> compute with no overlap exposes
// global-load latency at every BK = 8 step (only 512 FMAs per thread between barriers), and the
// 64 accumulators + 16 fragment registers allow 2 blocks = 16 warps per SM to hide it. Rung 08
// overlaps the next copy with this compute.
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::outer_product {

namespace {

constexpr int BM = 128, BN = 128;  // tile of C per block: 16 x 16 threads x (8 x 8) outputs
constexpr int BK = 8;              // k step: 256 float4 of each operand, one per thread
constexpr int TM = 8, TN = 8;      // outputs per thread = the outer product's size
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256
// A thread's 8 columns: two chunks of 4, BN/2 apart, each one LDS.128; a quarter-warp's 8 thread
// columns then read 128 contiguous bytes (a single 8-wide chunk would be 2-way conflicted).
constexpr int kChunk = 4, kChunkStride = BN / 2;
static_assert(kThreads == 256 && (BN / TN) * kChunk == kChunkStride, "16 x 16 threads, two chunks of 4 columns");
static_assert(BK * BM / 4 == kThreads && BK * BN / 4 == kThreads, "one float4 of each operand per thread");
static_assert(TM == 8 && TN == 2 * kChunk, "fragments are two float4 of A and two of B");

template <bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    outer_product_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ A, int64_t lda,
                         bool vec_a, const float* __restrict__ B, int64_t ldb, bool vec_b, float beta,
                         float* __restrict__ C, int64_t ldc, int tiles_n) {
  __shared__ __align__(16) float As[BK][BM];  // As: [BK][BM], As[kk][i] = op(A)(m0 + i, k0 + kk) (transposed)
  __shared__ __align__(16) float Bs[BK][BN];  // Bs: [BK][BN], Bs[kk][j] = op(B)(k0 + kk, n0 + j)
  const int b = static_cast<int>(blockIdx.x);
  const int tile_m = b / tiles_n, tile_n = b % tiles_n;
  const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
  const int tid = threadIdx.x;
  const detail::ThreadRC t = detail::thread_rc_16x16_warp4x8(tid);  // rows t.row * TM + i
  float acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // A^T is contiguous along m (X_CONTIG), A along k; B is contiguous along n, B^T along k.
    detail::load_kslab_vec4<BK, BM, kThreads, TA>(&As[0][0], A, lda, vec_a, m0, k0, m, k, tid);
    detail::load_kslab_vec4<BK, BN, kThreads, !TB>(&Bs[0][0], B, ldb, vec_b, n0, k0, n, k, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      // Fragments: a = op(A)(rows t.row*8 .. +7, kk), b = op(B)(kk, the thread's 8 columns).
      const float4 a_lo = *reinterpret_cast<const float4*>(&As[kk][t.row * TM]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&As[kk][t.row * TM + 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[kk][t.col * kChunk]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[kk][kChunkStride + t.col * kChunk]);
      const float a[TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bf[TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], bf[j], acc[i][j]);
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
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "outer_product");
  const bool vec_a = detail::float4_ok(a.A, a.lda), vec_b = detail::float4_ok(a.B, a.ldb);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    outer_product_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, kThreads, 0, a.stream>>>(
        a.m, a.n, a.k, a.alpha, a.A, a.lda, vec_a, a.B, a.ldb, vec_b, a.beta, a.C, a.ldc, static_cast<int>(tiles_n));
  });
  detail::check_launch("outer_product");
}

}  // namespace rungs::sgemm::outer_product
