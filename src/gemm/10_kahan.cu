// Rung 10, kahan: Kahan-compensated fp32 SGEMM on the CUDA cores (article 003; any transpose, ld
// and alignment): accurate to a few ulps at any k.
// Adds over 09 warptile: every accumulator s carries a compensation c, the low-order bits that the
// last addition into s lost; the next addend is corrected by it, so the k additions' rounding errors
// stop accumulating (a length-k dot product: ~k * 2^-24 worst case becomes ~2 * 2^-24). Per a*b:
//   y = fma(a, b, -c)      a*b - c with one rounding (the product enters unrounded)
//   t = s + y
//   c = (t - s) - y        what the addition dropped (exact when |s| >= |y|)
//   s = t
// and the result is s - c. __fmaf_rn / __fadd_rn / __fsub_rn: nvcc never contracts nor reassociates
// them, so (t - s) - y cannot be "simplified" to 0. As any compensated sum: once a partial sum
// overflows to Inf, t - s = Inf - Inf turns the compensation (then the sum) into NaN.
// Tiles: rung 08's 3-stage cp.async pipeline with rung 09's broadcast fragment layout, shrunk for two
// registers per output: 64x64x16, 8 warps of 16x32, each lane one 4x4 tile (16 sums, 16 compensations).
// Bounded by: FP32 issue: 4 dependent operations per multiply-add instead of one FFMA, a quarter of
// fp32 peak (~16 TFLOP/s on the H100); 16 independent accumulators hide the chain's latency.
// Prediction: ~10-13 TFLOP/s, ~4x below rung 09; measured: 13.3 TFLOP/s at 4096^3 (H100), error
// 3.6e-8 against cuBLAS sgemm's 1.15e-6.
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::kahan {

namespace {

using detail::GemmParams;

constexpr int BM = 64, BN = 64, BK = 16;  // block tile
constexpr int WM = 16, WN = 32;           // warp tile: 4 x 8 lanes of 4x4
constexpr int LN = WN / 4;                // lanes of a warp along n (8)
constexpr int WARPS_N = BN / WN;          // 2 (and BM / WM = 4 along m)
constexpr int THREADS = 32 * (BM / WM) * (BN / WN);  // 256
constexpr int STAGES = 3;  // 3 x 16 x (68 + 68) x 4 B <= 26 KB static: latency slack for free
static_assert((WM / 4) * LN == 32, "a warp is 32 lanes");

// A_KC / B_KC: the operand is stored k-contiguous (A with ta == N, B with tb == T).
template <bool A_KC, bool B_KC>
__global__ void __launch_bounds__(THREADS, 3) kahan_kernel(const GemmParams p) {
  constexpr int SLDA = detail::smem_stride<BM, A_KC>(), SLDB = detail::smem_stride<BN, B_KC>();
  __shared__ __align__(16) float As[STAGES][BK][SLDA];  // As[s][k][m] = op(A)(m0 + m, k0 + k)
  __shared__ __align__(16) float Bs[STAGES][BK][SLDB];  // Bs[s][k][n] = op(B)(k0 + k, n0 + n)
  using LoadA = detail::TileLoader<BK, BM, THREADS, SLDA, A_KC>;
  using LoadB = detail::TileLoader<BK, BN, THREADS, SLDB, B_KC>;

  const int b = static_cast<int>(blockIdx.x);
  const int m0 = (b / p.tiles_n) * BM, n0 = (b % p.tiles_n) * BN;
  const int m_left = p.m - m0, n_left = p.n - n0;  // >= 1
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5, lane = tid & 31;
  const int row0 = (warp / WARPS_N) * WM + (lane / LN) * 4;  // this lane's 4 rows ...
  const int col0 = (warp % WARPS_N) * WN + (lane % LN) * 4;  // ... and 4 columns in the tile
  const int kt_count = (p.k - 1) / BK + 1;

  LoadA load_a;
  LoadB load_b;
  load_a.init(detail::panel_base<A_KC>(p.A, p.lda, m0), p.lda, m_left, p.a_vec, tid);
  load_b.init(detail::panel_base<B_KC>(p.B, p.ldb, n0), p.ldb, n_left, p.b_vec, tid);
  auto load_tile = [&](int stage, int kt) {  // k-tiles in order
    const int k_left = p.k - kt * BK;
    load_a.load(&As[stage][0][0], p.lda, k_left, p.A);
    load_b.load(&Bs[stage][0][0], p.ldb, k_left, p.B);
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // group g holds tile g (empty past the end)
    if (s < kt_count) load_tile(s, s);
    detail::cp_async_commit();
  }

  float sum[4][4], comp[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) sum[i][j] = 0.0f, comp[i][j] = 0.0f;

  int read_stage = 0, write_stage = STAGES - 1;
  for (int kt = 0; kt < kt_count; ++kt) {
    detail::cp_async_wait<STAGES - 2>();  // groups 0..kt complete: tile kt landed
    __syncthreads();                      // ... for everyone; tile kt-1's stage is free
    if (kt + STAGES - 1 < kt_count) load_tile(write_stage, kt + STAGES - 1);
    detail::cp_async_commit();
    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;

    const float* as = &As[read_stage][0][0];
    const float* bs = &Bs[read_stage][0][0];
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[4], bf[4];
      detail::lds4(a, as + k * SLDA + row0);
      detail::lds4(bf, bs + k * SLDB + col0);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float y = __fmaf_rn(a[i], bf[j], -comp[i][j]);
          const float t = __fadd_rn(sum[i][j], y);
          comp[i][j] = __fsub_rn(__fsub_rn(t, sum[i][j]), y);
          sum[i][j] = t;
        }
    }
    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
  }
  detail::cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + i;
    if (row >= m_left) continue;
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __fsub_rn(sum[i][j], comp[i][j]);
    detail::store_c4(p.C, p.ldc, static_cast<int64_t>(m0) + row, static_cast<int64_t>(n0) + col0, n_left - col0, v,
                     p.alpha, p.beta, p.c_vec);
  }
}

template <bool A_KC, bool B_KC>
void launch(const Args& a) {
  const int64_t tiles_m = detail::ceil_div(a.m, BM), tiles_n = detail::ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "kahan");
  kahan_kernel<A_KC, B_KC><<<grid, THREADS, 0, a.stream>>>(detail::make_gemm_params(a, tiles_m, tiles_n));
  detail::check_launch("kahan");
}

}  // namespace

void run(const Args& a) {
  // A is k-contiguous when not transposed, B when transposed.
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) { launch<!decltype(ta)::value, decltype(tb)::value>(a); });
}

}  // namespace rungs::sgemm::kahan
