// Rung 08, double_buffer: rung 07's kernel (128x128x8 block tile, 256 threads placed 4 x 8 per
// warp, an 8x8 outer product per thread from four LDS.128 per k, A transposed in shared memory,
// B fragments in two 4-wide chunks 64 columns apart) with its global -> shared copies made
// asynchronous (cp.async) and the shared tiles multi-buffered: while the block multiplies
// k-tile t, the copies of tiles t+1 and t+2 are in flight (article 004 v8). Rung 07 copies a
// tile, waits, computes, waits again: every 8-k step pays a full global-memory latency (~1 us)
// that only the other resident block can cover. Here the copies overlap the FFMAs.
//
// Copies (detail/gemm_pipeline.cuh): the operand whose stored rows run along x (A with ta == T,
// B with tb == N) goes with 16-byte cp.async.cg (float4_ok) or 4-byte cp.async per element
// (unaligned); the operand whose stored rows run along k (A with ta == N, B with tb == T) goes
// element by element with 4-byte cp.async into its transposed slot: a 16-byte copy cannot
// transpose, and staging through registers would tie the copy to the compute order and cost 4
// registers per float4 in flight (the header of gemm_pipeline.cuh weighs the options). Ragged
// m/n/k edges are zero-filled (src_bytes = 0 from a clamped address).
//
// Pipeline (one barrier per k-tile instead of rung 07's two): at the top of iteration t, wait
// until tile t has landed (cp.async.wait_group STAGES-2: groups 0..t complete) and __syncthreads,
// which both publishes tile t and proves every thread is done reading tile t-1; then refill tile
// t-1's stage with tile t+STAGES-1 and compute tile t. STAGES = 3 rather than the textbook 2: an
// 8-k tile is only 512 FFMA per thread (~1 us with two blocks sharing an SM at ~50% of peak),
// about one global latency, and a third stage doubles the slack for 8.3 KB more shared memory
// (25 KB per block, static).
//
// Bounded by: issue and latency inside the SM. Per k a thread issues 4 LDS.128 for 64 FFMA, one
// wavefront each (rung 07's placement: a quarter-warp shares one A float4 and reads 128
// contiguous bytes of B), so shared memory runs at ~25% of its bandwidth at FFMA peak. But the
// fragments load right before their FFMAs (no register double buffer), so each k's LDS latency
// (~30 cycles) must be covered by other warps: 16 per SM (2 blocks x 8 warps; 64 accumulators +
// 16 fragment registers + addressing = 128 registers, the 2-blocks limit), and the block-wide
// barrier every 8 k drains the pipeline 8x more often than rung 09's. Expect ~45-55% of fp32
// peak (~30-37 TFLOP/s on H100 at 4096^3); rung 09 double-buffers the fragments, moves the
// barrier under the FFMAs, takes 16 k per barrier and tunes the tile shape.
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::double_buffer {

namespace {

using detail::GemmParams;

constexpr int BM = 128, BN = 128, BK = 8;  // block tile: rung 07's
constexpr int TM = 8, TN = 8;              // outputs per thread: rung 07's
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256, a 16 x 16 grid of threads
constexpr int STAGES = 3;                  // shared-memory buffers (see the header)
// A thread's 8 columns: rung 07's two chunks of 4, BN/2 apart (one LDS.128 each).
constexpr int kChunk = 4, kChunkStride = BN / 2;
static_assert((BN / TN) * kChunk == kChunkStride && TN == 2 * kChunk, "two chunks of 4 columns");

// A_KC / B_KC: the operand is stored k-contiguous (A with ta == N, B with tb == T).
template <bool A_KC, bool B_KC>
__global__ void __launch_bounds__(THREADS, 2) double_buffer_kernel(const GemmParams p) {
  constexpr int SLDA = detail::smem_stride<BM, A_KC>(), SLDB = detail::smem_stride<BN, B_KC>();
  __shared__ __align__(16) float As[STAGES][BK][SLDA];  // As[s][k][m] = op(A)(m0 + m, k0 + k)
  __shared__ __align__(16) float Bs[STAGES][BK][SLDB];  // Bs[s][k][n] = op(B)(k0 + k, n0 + n)
  using LoadA = detail::TileLoader<BK, BM, THREADS, SLDA, A_KC>;
  using LoadB = detail::TileLoader<BK, BN, THREADS, SLDB, B_KC>;

  const int b = static_cast<int>(blockIdx.x);
  const int m0 = (b / p.tiles_n) * BM, n0 = (b % p.tiles_n) * BN;
  const int m_left = p.m - m0, n_left = p.n - n0;  // >= 1
  const int tid = static_cast<int>(threadIdx.x);
  // Rung 07's placement: rows t.row*8 .. +7, columns t.col*4 .. +3 and 64 + t.col*4 .. +3.
  const detail::ThreadRC t = detail::thread_rc_16x16_warp4x8(tid);
  const int kt_count = (p.k - 1) / BK + 1;

  LoadA load_a;
  LoadB load_b;
  load_a.init(detail::panel_base<A_KC>(p.A, p.lda, m0), p.lda, m_left, p.a_vec, tid);
  load_b.init(detail::panel_base<B_KC>(p.B, p.ldb, n0), p.ldb, n_left, p.b_vec, tid);
  // Copies k-tile kt (the loaders step through the tiles in order) into `stage`.
  auto load_tile = [&](int stage, int kt) {
    const int k_left = p.k - kt * BK;
    load_a.load(&As[stage][0][0], p.lda, k_left, p.A);
    load_b.load(&Bs[stage][0][0], p.ldb, k_left, p.B);
  };

  // Prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty past the last tile,
  // so that group g always holds tile g).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_count) load_tile(s, s);
    detail::cp_async_commit();
  }

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  int read_stage = 0, write_stage = STAGES - 1;
  for (int kt = 0; kt < kt_count; ++kt) {
    // Committed so far: STAGES-1 + kt groups; tile kt is group kt, so STAGES-2 may still pend.
    detail::cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt visible to all; all reads of tile kt-1 (in write_stage) done
    if (kt + STAGES - 1 < kt_count) load_tile(write_stage, kt + STAGES - 1);
    detail::cp_async_commit();
    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;

    const float* as = &As[read_stage][0][0];
    const float* bs = &Bs[read_stage][0][0];
    // Unrolled by 2, not 8: fully unrolled, ptxas hoists the fragment loads of several k ahead
    // of their FFMAs and spills past the 128 registers that two blocks per SM allow.
#pragma unroll 2
    for (int k = 0; k < BK; ++k) {
      float a[TM], bf[TN];
      detail::lds4(a, as + k * SLDA + t.row * TM);
      detail::lds4(a + 4, as + k * SLDA + t.row * TM + 4);
      detail::lds4(bf, bs + k * SLDB + t.col * kChunk);
      detail::lds4(bf + 4, bs + k * SLDB + kChunkStride + t.col * kChunk);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], bf[j], acc[i][j]);
    }
    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
  }
  detail::cp_async_wait<0>();  // only empty groups can remain; leave nothing in flight

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = t.row * TM + i;
    if (row >= m_left) continue;
#pragma unroll
    for (int j = 0; j < TN; j += kChunk) {
      const int col = (j / kChunk) * kChunkStride + t.col * kChunk;
      detail::store_c4(p.C, p.ldc, static_cast<int64_t>(m0) + row, static_cast<int64_t>(n0) + col, n_left - col,
                       &acc[i][j], p.alpha, p.beta, p.c_vec);
    }
  }
}

template <bool A_KC, bool B_KC>
void launch(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, BM), tiles_n = detail::ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "double_buffer");
  double_buffer_kernel<A_KC, B_KC><<<grid, THREADS, 0, a.stream>>>(detail::make_gemm_params(a, tiles_m, tiles_n));
  detail::check_launch("double_buffer");
}

}  // namespace

void run(const Args& a) {
  // A is k-contiguous when not transposed, B when transposed.
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) { launch<!decltype(ta)::value, decltype(tb)::value>(a); });
}

}  // namespace rungs::sgemm::double_buffer
