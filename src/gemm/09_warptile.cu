// Rung 09, warptile: the flagship CUDA-core SGEMM. Over rung 08 it adds
//  - warp tiling as a parameter: each warp owns a WM x WN sub-tile, each lane TM x TN outputs
//    in 4x4 sub-tiles that interleave with the other lanes' (sub-tile i of lane row r starts at
//    warp row 4*LM*i + 4*r), so every LDS.128 of a fragment reads LM (or LN) <= 8 distinct
//    contiguous float4s shared by broadcast: 1 wavefront, for any tile shape -- rung 08's fixed
//    16 x 16 placement is the 32x64-warp, 8x8-lane case of this, and 16x8 per lane (fewer LDS
//    per FFMA) or smaller block tiles (more blocks for small problems) become possible;
//  - register double buffering: the fragments of k+1 load while the FFMAs of k run, and the
//    k-tile barrier sits before the last k's FFMAs so the next tile's first fragments load
//    under them: no LDS latency is exposed, even with a single block per SM;
//  - a block swizzle (bands of 8 tile rows) so resident blocks share A and B panels in L2;
//  - a float4 epilogue when C allows it (float4_ok), scalar and masked otherwise;
//  - tile configurations chosen per shape (table below; `rungs tune gemm` measures them all);
//  - split-K where the tiles leave SM block slots empty (1024^3: 128 tiles of 64x128 for 132 SMs x
//    4 slots, one warp per scheduler): k cut into up to 4 pieces, partial products in a
//    stream-ordered workspace, summed in split order by a second kernel (reduce_splits);
//  - optionally the k-tile as a loop of KU-step groups instead of fully unrolled (configs _u4),
//    and the FFMAs of a k step in 2 x 2 blocks walked as a serpentine (configs _o1): both a and
//    b values can stay in the operand reuse caches, so fewer register-file reads per FFMA.
// Shared-memory pipeline as rung 08 (STAGES-deep cp.async ring, one barrier per k-tile, the
// k-contiguous operand transposed by 4-byte copies; see detail/gemm_pipeline.cuh), with BK = 16
// so the per-tile fixed cost (barrier, wait, stage rotation, copy issue) is spread over 1024
// FFMA per thread, and interior tiles copied without any bounds test.
//
// Bounded by: FFMA issue. Napkin for the default 128x128x16, 256 threads, 8x8 per lane:
//  - per k a lane issues 64 FFMA + 4 LDS.128; per k-tile add ~25 instructions of copies for the
//    transposed operand, ~10 for the other, ~20 of barrier/loop: ~1145 issue slots for 1024
//    FFMA, so at most ~89% of the 128 FFMA/clk/SM (~60 TFLOP/s at 1.98 GHz, less under power
//    capping) -- cuBLAS's SASS-tuned kernels sit at ~76% of peak;
//  - shared memory: 4 wavefronts per 64 warp-FFMAs = 25% of the 1 wavefront/clk/SM at FFMA
//    peak (+~2% for the cp.async writes): not the limit any more;
//  - registers: 64 accumulators + 2 x 16 fragments + ~30 addressing = 127 (<= 128), so 2 blocks
//    (16 warps, 4 per scheduler) per SM; shared memory 3 x 16 KB = 50 KB per block;
//  - L2 -> SM: (128+128) x 16 x 4 B per 2 x 128 x 128 x 16 FLOP = 32 FLOP/B: 1.6 TB/s at
//    50 TFLOP/s, a fraction of L2 bandwidth; DRAM traffic is lower still thanks to the swizzle.
// The 16x8-per-lane configs (128x256, 256x128) halve the LDS share (6 per 128 FFMA) and need
// 255 registers, so one block (8 warps) per SM. Small problems (1024^2 is only 64 tiles of
// 128x128 for 132 SMs) take 64x128 or 64x64 tiles to occupy every SM.
// Measured (H100 SXM, NN, 5668856; docs/gemm.md): the picks run 46.5 TFLOP/s at 2048^3 (128x256x32
// _u4_o1), 48.6 at 4096^3 and 49.1 at 8192^3 (128x256x64 s2 _u4_o1): 0.93 / 0.94 / 0.95x cuBLAS;
// 64x128x16 _u4_o1 split 4 0.99x at 1024^3 and 1536^3 (split-K was predicted 1.15x and gave 1.12x
// over no split). The looped k-tiles with the 2 x 2 FFMA order run 3 % faster than without it; ptxas
// keeps only part of the order (2.2 register-file reads per FFMA, cuBLAS 1.66:
// scripts/experiments/sass_regreads.py), and that is the gap to cuBLAS.
// ncu at 4096^3 (f7ed9c0, scripts/experiments/ncu_sgemm.sh, docs/gemm.md): 128x256x16 issues on
// 77 % of cycles (IPC 3.22, FFMA 91.7 % of the main loop's instructions) where cuBLAS's SIMT kernel
// (256x128x8, 8 warps of 64x64, 16x8 per thread, 3 stages, 254 registers) issues on 87 % (IPC 3.60,
// FFMA 88.7 %): we issue fewer instructions per FFMA but stall more ("dispatch" 8.5 % of samples
// against 4.7 %, "no instruction" 6.3 against 0.6, "wait" 4.2 against ~0). The 4-step loop (_u4)
// cuts "no instruction" to 2.0 %, "dispatch" grows to 10.7 % and the issue rate does not move
// (47.0-47.3). The transposed copy of the k-contiguous operand costs 4-8% (tn 47.2 vs nn 45.4 vs
// nt 43.3 at 4096, 128x128x16). The tuner also times, and the picks leave out (docs/gemm.md,
// "Measured and not kept"):
//  - cuBLAS's shape 256x128x8 (and 128x256x8): half the smem per stage, 2x the barriers per FFMA;
//    3.549 / 3.023 ms at 4096^3 against 128x256x16's 2.881;
//  - 128x256x16 with 4 stages (99 KB of smem NN): one more tile of latency cover at 1 block/SM;
//    2.936 against 2.881 ms;
//  - *_rs: the k-contiguous operand register-staged (detail::RegTileLoader): LDG.128 along k at
//    the top of tile t for tile t+S-1, 4 transposing STS.32 per float4 after tile t's FFMAs --
//    a quarter of the load instructions and L1 requests of 4-byte cp.async, + BX*BK/threads
//    registers (8 at 128x16 / 256 threads; the 128-register configs can only afford one operand:
//    _rs1 = the one k-contiguous operand, none in TT; _rsa = A in NN only). 1-14 % slower in every
//    configuration: the staging registers and STS cost more than the cp.async they replace.
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tile.cuh"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace rungs::sgemm::warptile {

namespace {

using detail::GemmParams;

// One tile configuration. The block tile BM x BN is split among warps of WM x WN; each lane of
// a warp owns TM x TN outputs as (TM/4) x (TN/4) sub-tiles of 4x4, LM x LN lanes per warp
// (LM = WM/TM, LN = WN/TN, LM * LN = 32). Sub-tile i of a lane covers warp rows
// i*4*LM + lane_row*4 .. +3, so one LDS.128 per sub-tile reads LM (or LN) distinct,
// contiguous float4s that the other lanes of the warp share by broadcast: one wavefront each.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int STAGES_, int MIN_BLOCKS_, int RS_ = 0,
          int KU_ = BK_, int ORDER_ = 0>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_;
  // KU: k steps unrolled together. KU == BK unrolls the whole k-tile (16 x 134 instructions,
  // ~34 KB of SASS at 16x8 per lane: more than the instruction cache keeps, so warps stall on
  // fetch); KU < BK runs the k-tile as a loop whose body is KU steps (the last KU peeled for the
  // barrier), ~17 KB at KU = 4, the size of cuBLAS's BK = 8 body.
  static constexpr int KU = KU_;
  // ORDER: the FFMAs of one k step in source order, 0 row by row (acc[i][0..TN-1] with a[i]),
  // 1 in 2 x 2 blocks walked as a serpentine (cuBLAS's SASS order: each block's two a and two b
  // values, an even and an odd register, can stay in the operand reuse caches), 2 the same with
  // the column pairs outer. ptxas reorders any of them (docs/gemm.md, "register reads"); configs
  // _o1 / _o2 measure what is left of the difference.
  static constexpr int ORDER = ORDER_;
  static_assert(ORDER >= 0 && ORDER <= 2, "row by row, or 2 x 2 blocks with rows or columns outer");
  static_assert(KU % 2 == 0 && BK % KU == 0, "whole groups of k steps, even for the register double buffer");
  // RS: which k-contiguous operands go through registers (RegTileLoader: LDG.128 along k,
  // transposing STS.32) instead of 4-byte cp.async (TileLoader<.., true>): 0 none, 1 A when B is
  // x-contiguous (NN only), 3 every k-contiguous one, 4 the only k-contiguous one (none in TT).
  // Each costs BX * BK / threads registers, which the 128-register configs lack for B (or A+B).
  static constexpr int RS = RS_;
  template <bool A_KC, bool B_KC>
  static constexpr bool rs_a() {
    return A_KC && (RS == 3 || ((RS == 1 || RS == 4) && !B_KC));
  }
  template <bool A_KC, bool B_KC>
  static constexpr bool rs_b() {
    return B_KC && (RS == 3 || (RS == 4 && !A_KC));
  }
  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int LM = WM / TM, LN = WN / TN;
  static constexpr int SUB_M = TM / 4, SUB_N = TN / 4;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "4x4 sub-tiles");
  static_assert(LM * LN == 32, "a warp is 32 lanes");
  static_assert(LM <= 8 && LN <= 8, "one LDS.128 wavefront (<= 128 distinct bytes) per fragment load");
  static_assert(BK % 2 == 0 && STAGES >= 2, "register double buffer alternates within a tile");
  // L2 swizzle band height (tile rows). fp32 SIMT GEMM is compute bound (32 FLOP per byte of
  // L2 traffic at 128x128), so this is a small win at 4096+ where a row of tiles spans many
  // SMs' worth of B panels; 8 keeps ~264 resident 128x128 blocks inside 8 A and ~33 B panels.
  static constexpr int GROUP = 8;

  template <bool A_KC, bool B_KC>
  static constexpr int smem_bytes() {
    return STAGES * BK * (detail::smem_stride<BM, A_KC>() + detail::smem_stride<BN, B_KC>()) *
           static_cast<int>(sizeof(float));
  }
};

// Split-K (small problems: fewer tiles than the SMs hold blocks): blockIdx.y = z multiplies
// k in [z * k_len, min(k, (z + 1) * k_len)) and writes its raw partial product to ws[z] (m x n,
// row stride n); reduce_splits then forms C = alpha * (ws[0] + ws[1] + ...) + beta * C in that
// order. ws == nullptr: no split, the block finishes C itself.
struct SplitK {
  float* ws = nullptr;
  int k_len = 0;
};

// A_KC / B_KC: operand stored k-contiguous (A with ta == N, B with tb == T); see gemm_pipeline.cuh.
template <class T, bool A_KC, bool B_KC>
__global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS) warptile_kernel(const GemmParams p, const SplitK sk) {
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, TM = T::TM, TN = T::TN, S = T::STAGES;
  constexpr int NT = T::THREADS;
  constexpr int SLDA = detail::smem_stride<BM, A_KC>(), SLDB = detail::smem_stride<BN, B_KC>();
  constexpr int A_STAGE = BK * SLDA, B_STAGE = BK * SLDB;
  constexpr bool A_RS = T::template rs_a<A_KC, B_KC>(), B_RS = T::template rs_b<A_KC, B_KC>();  // register-staged operands
  using LoadA = std::conditional_t<A_RS, detail::RegTileLoader<BK, BM, NT, SLDA>,
                                   detail::TileLoader<BK, BM, NT, SLDA, A_KC>>;
  using LoadB = std::conditional_t<B_RS, detail::RegTileLoader<BK, BN, NT, SLDB>,
                                   detail::TileLoader<BK, BN, NT, SLDB, B_KC>>;

  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);  // As: [S][BK][SLDA], As[s][k][m] = op(A)(m0 + m, k0 + k)
  float* Bs = As + S * A_STAGE;                 // Bs: [S][BK][SLDB], Bs[s][k][n] = op(B)(k0 + k, n0 + n)

  int tm, tn;
  detail::swizzle_tile(static_cast<int>(blockIdx.x), p.tiles_m, p.tiles_n, T::GROUP, tm, tn);
  const int m0 = tm * BM, n0 = tn * BN;
  const int m_left = p.m - m0, n_left = p.n - n0;  // >= 1
  const int tid = static_cast<int>(threadIdx.x);
  // This block's k range: all of k, or split z's (k_len is a multiple of BK, so the float4
  // alignment of the loaders' k offsets is the same as at k = 0).
  const int z = static_cast<int>(blockIdx.y);
  const int k_begin = sk.ws ? z * sk.k_len : 0;
  const int k_size = sk.ws ? min(sk.k_len, p.k - k_begin) : p.k;  // >= 1
  const int kt_count = (k_size - 1) / BK + 1;

  LoadA load_a;
  LoadB load_b;
  // Element (k_begin, x0) of each operand, in stored terms.
  const float* a_base = detail::panel_base<A_KC>(p.A, p.lda, m0) + (A_KC ? k_begin : k_begin * p.lda);
  const float* b_base = detail::panel_base<B_KC>(p.B, p.ldb, n0) + (B_KC ? k_begin : k_begin * p.ldb);
  load_a.init(a_base, p.lda, m_left, p.a_vec, tid);
  load_b.init(b_base, p.ldb, n_left, p.b_vec, tid);
  // Starts k-tile kt (the loaders step through the tiles in order) towards `stage`: cp.async
  // operands are copied there, register-staged ones fetched into registers ...
  auto load_tile = [&](int stage, int kt) {
    const int k_left = k_size - kt * BK;
    if constexpr (A_RS) load_a.fetch(p.lda, k_left);
    else load_a.load(As + stage * A_STAGE, p.lda, k_left, p.A);
    if constexpr (B_RS) load_b.fetch(p.ldb, k_left);
    else load_b.load(Bs + stage * B_STAGE, p.ldb, k_left, p.B);
  };
  // ... and stored into it by finish_tile (nothing to do without register staging).
  auto finish_tile = [&](int stage) {
    if constexpr (A_RS) load_a.store(As + stage * A_STAGE);
    if constexpr (B_RS) load_b.store(Bs + stage * B_STAGE);
    (void)stage;
  };

  // Warp (wm, wn) of the block, lane (lr, lc) of the warp.
  const int warp = tid >> 5, lane = tid & 31;
  const int wm = warp / T::WARPS_N, wn = warp % T::WARPS_N;
  const int lr = lane / T::LN, lc = lane % T::LN;
  const int a_off = wm * T::WM + lr * 4;  // + i * 4 * LM for sub-tile row i
  const int b_off = wn * T::WN + lc * 4;  // + j * 4 * LN for sub-tile column j

  auto load_frags = [&](float* fa, float* fb, const float* as, const float* bs, int k) {
#pragma unroll
    for (int i = 0; i < T::SUB_M; ++i) detail::lds4(fa + 4 * i, as + k * SLDA + a_off + i * 4 * T::LM);
#pragma unroll
    for (int j = 0; j < T::SUB_N; ++j) detail::lds4(fb + 4 * j, bs + k * SLDB + b_off + j * 4 * T::LN);
  };

  // Prologue: tiles 0 .. S-2 in flight (one commit group each, empty past the last tile, so
  // that "group g holds tile g" stays true for the wait counts below).
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < kt_count) {
      load_tile(s, s);
      finish_tile(s);
    }
    detail::cp_async_commit();
  }
  detail::cp_async_wait<S - 2>();  // tile 0 landed (this thread's copies) ...
  __syncthreads();                 // ... and everyone's

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  float fa[2][TM], fb[2][TN];  // register double buffer: fragments of k+1 load while k multiplies
  auto fma_step = [&](int buf) {
    if constexpr (T::ORDER == 0) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[buf][i], fb[buf][j], acc[i][j]);
    } else {
      // 2 x 2 blocks walked as a serpentine: ORDER 1 over the column pairs of each row pair,
      // ORDER 2 over the row pairs of each column pair.
      constexpr bool rows_outer = T::ORDER == 1;
      constexpr int OUTER = rows_outer ? TM / 2 : TN / 2, INNER = rows_outer ? TN / 2 : TM / 2;
#pragma unroll
      for (int o = 0; o < OUTER; ++o)
#pragma unroll
        for (int in = 0; in < INNER; ++in) {
          const int w = o % 2 == 0 ? in : INNER - 1 - in;
          const int p2 = rows_outer ? o : w, q2 = rows_outer ? w : o;
#pragma unroll
          for (int d = 0; d < 4; ++d) {
            const int i = 2 * p2 + (rows_outer ? d / 2 : d % 2), j = 2 * q2 + (rows_outer ? d % 2 : d / 2);
            acc[i][j] = fmaf(fa[buf][i], fb[buf][j], acc[i][j]);
          }
        }
    }
  };
  int read_stage = 0, write_stage = S - 1;
  const float* as = As;
  const float* bs = Bs;
  load_frags(fa[0], fb[0], as, bs, 0);

  for (int kt = 0; kt < kt_count; ++kt) {
    // Refill the stage freed by the barrier at the end of tile kt-1 (it held tile kt-1) with
    // tile kt+S-1. Always commit, so group kt+S-1 exists.
    // Register-staged operands are fetched now and stored at the end of the tile (before the
    // barrier that precedes any read of that stage), so the FFMAs of tile kt hide the loads.
    const bool fill = kt + S - 1 < kt_count;  // block-uniform
    const int fill_stage = write_stage;
    (void)fill_stage;  // read only when register staging
    if (fill) load_tile(write_stage, kt + S - 1);
    detail::cp_async_commit();
    write_stage = write_stage + 1 == S ? 0 : write_stage + 1;

    if constexpr (T::KU < BK) {
      // k = 0 .. BK-KU-1: a loop over groups of KU steps (not unrolled), its body one group.
#pragma unroll 1
      for (int g = 0; g < BK / T::KU - 1; ++g) {
        const float* ag = as + g * T::KU * SLDA;
        const float* bg = bs + g * T::KU * SLDB;
#pragma unroll
        for (int u = 0; u < T::KU; ++u) {
          load_frags(fa[(u + 1) % 2], fb[(u + 1) % 2], ag, bg, u + 1);
          fma_step(u % 2);
        }
      }
    }
    // The last KU steps (all BK when KU == BK), unrolled: the barrier and the next tile's first
    // fragments go under the FFMAs of k = BK-1.
#pragma unroll
    for (int k = BK - T::KU; k < BK; ++k) {
      if (k == BK - 1) {
        if (kt + 1 < kt_count) {  // block-uniform
          if constexpr (A_RS || B_RS) {
            if (fill) finish_tile(fill_stage);  // fill implies kt + 1 < kt_count
          }
          // Committed groups: S-1 + (kt+1); tile kt+1 is group kt+1, so at most S-2 may pend.
          // The barrier also ends every thread's reads of stage kt % S (its last fragment load
          // was k = BK-2 above), which the next iteration's copies overwrite.
          detail::cp_async_wait<S - 2>();
          __syncthreads();
          read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
          as = As + read_stage * A_STAGE;
          bs = Bs + read_stage * B_STAGE;
          load_frags(fa[0], fb[0], as, bs, 0);  // BK even: (k+1) % 2 == 0
        }
      } else {
        load_frags(fa[(k + 1) % 2], fb[(k + 1) % 2], as, bs, k + 1);
      }
      fma_step(k % 2);
    }
  }
  detail::cp_async_wait<0>();  // only empty groups can remain; leave nothing in flight

  // Epilogue: row i*4*LM + r of the lane's sub-tiles, 4 consecutive columns per store; a split
  // writes its raw partial sums into its slice of the workspace instead.
  float* const out = sk.ws ? sk.ws + static_cast<int64_t>(z) * p.m * p.n : p.C;
  const int64_t ld_out = sk.ws ? p.n : p.ldc;
  const float alpha = sk.ws ? 1.0f : p.alpha, beta = sk.ws ? 0.0f : p.beta;
  const bool vec_out = sk.ws ? p.n % 4 == 0 : p.c_vec;
#pragma unroll
  for (int i = 0; i < T::SUB_M; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = a_off + i * 4 * T::LM + r;  // within the block tile
      if (row >= m_left) continue;
#pragma unroll
      for (int j = 0; j < T::SUB_N; ++j) {
        const int col = b_off + j * 4 * T::LN;
        detail::store_c4(out, ld_out, static_cast<int64_t>(m0) + row, static_cast<int64_t>(n0) + col, n_left - col,
                         &acc[i * 4 + r][j * 4], alpha, beta, vec_out);
      }
    }
}

// C = alpha * (ws[0] + ... + ws[splits-1]) + beta * C (C not read when beta == 0), summed in split
// order: one thread per element of C, consecutive threads along a row.
__global__ void reduce_splits(const float* __restrict__ ws, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float* __restrict__ C, int64_t ldc) {
  const int64_t mn = m * n;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < mn;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = ws[e];
    for (int z = 1; z < splits; ++z) s += ws[z * mn + e];
    detail::epilogue_store(C, ldc, e / n, e % n, s, alpha, beta);
  }
}

template <class T, bool A_KC, bool B_KC>
void launch(const Args& a, const SplitK& sk, int splits) {
  const int64_t tiles_m = detail::ceil_div(a.m, T::BM), tiles_n = detail::ceil_div(a.n, T::BN);
  dim3 grid = detail::tile_grid(tiles_m, tiles_n, "warptile");
  grid.y = static_cast<unsigned>(splits);
  constexpr int smem = T::template smem_bytes<A_KC, B_KC>();
  static_assert(smem <= 227 * 1024, "fits one SM's shared memory");
  auto* kernel = &warptile_kernel<T, A_KC, B_KC>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  detail::GemmParams prm = detail::make_gemm_params(a, tiles_m, tiles_n);
  // The register-staged loader reads k-contiguous operands as float4s along k when aligned.
  if (T::template rs_a<A_KC, B_KC>()) prm.a_vec = detail::float4_ok(a.A, a.lda);
  if (T::template rs_b<A_KC, B_KC>()) prm.b_vec = detail::float4_ok(a.B, a.ldb);
  kernel<<<grid, T::THREADS, smem, a.stream>>>(prm, sk);
  detail::check_launch("warptile");
}

// Runs configuration T with k cut into `splits` pieces (1: none). The workspace of a split
// product (splits x m x n floats) is the library's stream-ordered scratch (detail::Scratch), so
// concurrent calls on other streams or threads never share it.
template <class T>
void launch_any(const Args& a, int splits) {
  splits = std::max(1, std::min<int>(splits, static_cast<int>(detail::ceil_div(a.k, T::BK))));
  SplitK sk;
  if (splits > 1) {
    sk.k_len = static_cast<int>(detail::ceil_div(detail::ceil_div(a.k, splits), T::BK) * T::BK);
    splits = static_cast<int>(detail::ceil_div(a.k, sk.k_len));  // every split gets >= 1 k
  }
  std::unique_ptr<detail::Scratch> ws;  // freed on the stream after the reduction
  if (splits > 1) {
    ws = std::make_unique<detail::Scratch>(
        static_cast<size_t>(splits) * static_cast<size_t>(a.m) * static_cast<size_t>(a.n) * sizeof(float), a.stream);
    sk.ws = ws->as<float>();
  }
  const bool a_kc = a.ta == Trans::N, b_kc = a.tb == Trans::T;
  if (a_kc && b_kc) launch<T, true, true>(a, sk, splits);
  else if (a_kc) launch<T, true, false>(a, sk, splits);
  else if (b_kc) launch<T, false, true>(a, sk, splits);
  else launch<T, false, false>(a, sk, splits);
  if (splits > 1) {
    const int64_t mn = a.m * a.n;
    const int blocks = static_cast<int>(std::min<int64_t>(detail::ceil_div(mn, 256), 8 * detail::sm_count()));
    reduce_splits<<<blocks, 256, 0, a.stream>>>(sk.ws, splits, a.m, a.n, a.alpha, a.beta, a.C, a.ldc);
    detail::check_launch("warptile split-K reduction");
  }
}

// The compiled configurations: BM, BN, BK, WM, WN, TM, TN, STAGES, min blocks per SM[, RS].
// 26 x 4 transposes = 104 kernels: ~60 s of one core (nvcc, sm_90a); every one at <= 128
// (2+ blocks/SM) or 255 (1 block/SM) registers without spills (-warn-spills is an error).
using Big = Tile<128, 128, 16, 32, 64, 8, 8, 3, 2>;    // 256 thr, <= 128 regs: 2 blocks/SM
using Deep = Tile<128, 128, 32, 32, 64, 8, 8, 3, 2>;   // Big with half the per-tile overhead, 2x smem
using Wide = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1>;  // 256 thr, 16x8 per thread, 1 block/SM
using Tall = Tile<256, 128, 16, 64, 64, 16, 8, 3, 1>;  // 256 thr, 16x8 per thread, 1 block/SM
using Mid = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4>;     // 128 thr: twice Big's blocks, for mid sizes
using Small = Tile<64, 64, 16, 32, 32, 8, 4, 3, 4>;    // 128 thr: 4x Big's blocks, for 1024^2-ish
// cuBLAS's own SIMT shape (sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1):
// 8 warps of 64x64, 16x8 per thread, BK = 8, 3 stages, 1 block/SM; and its transpose, and a deeper Wide.
using Cub = Tile<256, 128, 8, 64, 64, 16, 8, 3, 1>;
using CubW = Tile<128, 256, 8, 64, 64, 16, 8, 3, 1>;
using Wide4 = Tile<128, 256, 16, 64, 64, 16, 8, 4, 1>;
// Register-staged k-contiguous operand (_rs): LDG.128 along k + transposing STS instead of 4-byte cp.async.
using CubRs = Tile<256, 128, 8, 64, 64, 16, 8, 3, 1, 3>;
using CubWRs = Tile<128, 256, 8, 64, 64, 16, 8, 3, 1, 3>;
using WideRs = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 3>;
using BigRs = Tile<128, 128, 16, 32, 64, 8, 8, 3, 2, 4>;  // NN: A, NT: B (128 regs)
using MidRs = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 1>;   // NN only: B's 16 would spill
// The k-tile as a loop of 4-step groups (_u4): a body the instruction cache keeps (ncu at 4096^3,
// 128x256x16 fully unrolled: 6.3 % of the main loop's stall samples "no instruction", cuBLAS 0.6 %).
// BK = 32 costs no more code then, and halves the barriers and copy issue per FFMA.
using WideU = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 4>;
using Wide32U = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4>;
using MidU = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 0, 4>;
using WideU2 = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 2>;
// The FFMAs of a k step in 2 x 2 serpentine order (_o1; _o2 walks the column pairs first): fewer
// register-file reads per FFMA where ptxas keeps the order (docs/gemm.md, "register reads"). It
// pays in the looped k-tiles (3 % at 4096^3) and costs the fully unrolled one 3 %.
using WideO = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 16, 1>;
using WideUO = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 4, 1>;
using Wide32UO = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4, 1>;
using Wide32UO4 = Tile<128, 256, 32, 64, 64, 16, 8, 4, 1, 0, 4, 1>;
using Wide32UO2 = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4, 2>;
using Wide64UO = Tile<128, 256, 64, 64, 64, 16, 8, 2, 1, 0, 4, 1>;
using Tall32UO = Tile<256, 128, 32, 64, 64, 16, 8, 3, 1, 0, 4, 1>;
using MidUO = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 0, 4, 1>;

struct Config {
  const char* name;
  int bm, bn;
  int min_blocks;  // blocks per SM the configuration is built for
  int splits;      // k cut into this many pieces (1: none)
  void (*run)(const Args&, int splits);
};
template <class T>
constexpr Config config(const char* name, int splits = 1) {
  return {name, T::BM, T::BN, T::MIN_BLOCKS, splits, launch_any<T>};
}

// Names: BMxBNxBK_wWMxWN_tTMxTN_sSTAGES[_rs*][_uKU][_kSPLITS]. Indices are what `rungs tune gemm`
// reports. The split-K entries (_k2, _k4) reuse a compiled configuration.
const Config kConfigs[] = {
    config<Big>("128x128x16_w32x64_t8x8_s3"),
    config<Deep>("128x128x32_w32x64_t8x8_s3"),
    config<Wide>("128x256x16_w64x64_t16x8_s3"),
    config<Tall>("256x128x16_w64x64_t16x8_s3"),
    config<Mid>("64x128x16_w32x64_t8x8_s3"),
    config<Small>("64x64x16_w32x32_t8x4_s3"),
    config<Cub>("256x128x8_w64x64_t16x8_s3"),
    config<CubW>("128x256x8_w64x64_t16x8_s3"),
    config<Wide4>("128x256x16_w64x64_t16x8_s4"),
    config<CubRs>("256x128x8_w64x64_t16x8_s3_rs"),
    config<CubWRs>("128x256x8_w64x64_t16x8_s3_rs"),
    config<WideRs>("128x256x16_w64x64_t16x8_s3_rs"),
    config<BigRs>("128x128x16_w32x64_t8x8_s3_rs1"),
    config<MidRs>("64x128x16_w32x64_t8x8_s3_rsa"),
    config<WideU>("128x256x16_w64x64_t16x8_s3_u4"),
    config<Wide32U>("128x256x32_w64x64_t16x8_s3_u4"),
    config<MidU>("64x128x16_w32x64_t8x8_s3_u4"),
    config<WideU2>("128x256x16_w64x64_t16x8_s3_u2"),
    config<WideO>("128x256x16_w64x64_t16x8_s3_o1"),
    config<WideUO>("128x256x16_w64x64_t16x8_s3_u4_o1"),
    config<Wide32UO>("128x256x32_w64x64_t16x8_s3_u4_o1"),
    config<Wide32UO4>("128x256x32_w64x64_t16x8_s4_u4_o1"),
    config<Wide32UO2>("128x256x32_w64x64_t16x8_s3_u4_o2"),
    config<Wide64UO>("128x256x64_w64x64_t16x8_s2_u4_o1"),
    config<Tall32UO>("256x128x32_w64x64_t16x8_s3_u4_o1"),
    config<MidUO>("64x128x16_w32x64_t8x8_s3_u4_o1"),
    config<Mid>("64x128x16_w32x64_t8x8_s3_k2", 2),
    config<Mid>("64x128x16_w32x64_t8x8_s3_k4", 4),
    config<MidU>("64x128x16_w32x64_t8x8_s3_u4_k2", 2),
    config<MidU>("64x128x16_w32x64_t8x8_s3_u4_k4", 4),
    config<Small>("64x64x16_w32x32_t8x4_s3_k4", 4),
    config<MidUO>("64x128x16_w32x64_t8x8_s3_u4_o1_k4", 4),
};
constexpr size_t kNumConfigs = sizeof(kConfigs) / sizeof(kConfigs[0]);

// Choice table, from `rungs tune gemm` on H100 SXM (median of 20-30, L2 flushed):
//   At 970c2d9, 4096^3: 128x128x16 45.8, 128x128x32 46.3, 128x256x16 47.3, 256x128x16 45.1,
//           64x128x16 46.3, 64x64x16 38.7 TFLOP/s (cuBLAS 51.7-52.0);
//   2048^3: 128x256x16 45.3 (0.91 of cuBLAS); 8192^3: 128x256x16 48.0 (0.93);
//   1024^3: 64x128x16 29.2 (0.88 of cuBLAS's 33).
//   Split-K and the looped k-tile (tune at 7a97a94): 1024^3 64x128x16 0.0725 ms (0.88x), _u4
//   0.0716 (0.90x), _k4 0.0669 (0.96x), _u4_k4 0.0646 (0.99x; cuBLAS 0.064); 2048^3 _u4 44.2
//   against 64x128x16 43.5 and 128x256x16 45.7 TFLOP/s (0.91x).
//   The _o1 configs (5668856; docs/gemm.md): NN 2048 / 4096 / 8192^3 128x256x16
//   0.378 / 2.898 / 22.91 ms, 128x256x32_u4_o1 0.367 / 2.818 / 22.54, 128x256x64_s2_u4_o1 0.368 /
//   2.806 / 22.40 (0.93 / 0.94 / 0.95x cuBLAS); with B stored n x k (NT, TT) 256x128x32_u4_o1 is
//   first: TT 4096^3 2.809 against 3.037 for 128x256x32_u4_o1 and 3.262 for 128x256x16 (the
//   operand copied with 4-byte transposing cp.async gets the tile's short side). 64x128x16_u4_o1
//   split 4: 1024^3 0.0644 ms (0.99x), 1536^3 0.193 (0.99x; unsplit 0.226, split 2 0.204).
// The first row whose config cuts the problem into at least min_tiles_per_sm tiles per SM wins
// (the last row always does); b_kc names the configuration used when B is stored n x k.
// Split-K (split_for): where the picked configuration's tiles fill at most 60 % of the SMs' block
// slots (1024^2 at 64x128: 128 tiles of 4 warps for 132 SMs x 4 slots; 1536^2: 288), k is cut
// into up to 4 pieces of at least 256 k each (2048^2 at 64x128, 97 % of the slots: split 2 and 4
// measured 6-11 % slower than none).
struct Pick {
  const char* config;
  const char* b_kc;
  double min_tiles_per_sm;
};
constexpr Pick kPicks[] = {
    {"128x256x64_w64x64_t16x8_s2_u4_o1", "256x128x32_w64x64_t16x8_s3_u4_o1", 2.0},  // ~2900^2 and up
    {"128x256x32_w64x64_t16x8_s3_u4_o1", "256x128x32_w64x64_t16x8_s3_u4_o1", 0.9},  // ~2000^2 and up
    {"64x128x16_w32x64_t8x8_s3_u4_o1", "64x128x16_w32x64_t8x8_s3_u4_o1", 0.9},      // ~1000^2 .. 2000^2
    {"64x64x16_w32x32_t8x4_s3", "64x64x16_w32x32_t8x4_s3", 0.0},                    // everything smaller
};
constexpr int kMaxSplits = 4;
constexpr int64_t kMinSplitK = 256;
constexpr double kSplitBelow = 0.6;  // of the block slots

const Config& config_named(const char* name) {
  for (const auto& c : kConfigs)
    if (std::string(c.name) == name) return c;
  detail::unsupported("warptile", std::string("no configuration ") + name);  // a typo in kPicks
}

int split_for(const Config& c, double tiles, const Args& a, int sms) {
  const double slots = static_cast<double>(sms) * c.min_blocks;
  if (tiles > kSplitBelow * slots) return 1;
  return static_cast<int>(std::clamp<int64_t>(a.k / kMinSplitK, 1, kMaxSplits));
}

}  // namespace

std::vector<std::string> configs() {
  std::vector<std::string> names;
  for (const auto& c : kConfigs) names.emplace_back(c.name);
  return names;
}

void run_config(size_t index, const Args& a) {
  if (index >= kNumConfigs) detail::unsupported("warptile", "no configuration " + std::to_string(index));
  kConfigs[index].run(a, kConfigs[index].splits);
}

void run(const Args& a) {
  const int sms = detail::sm_count();
  const bool b_kc = a.tb == Trans::T;
  for (const Pick& pick : kPicks) {
    const Config& c = config_named(b_kc ? pick.b_kc : pick.config);
    const double tiles = static_cast<double>(detail::ceil_div(a.m, c.bm)) * detail::ceil_div(a.n, c.bn);
    if (tiles >= pick.min_tiles_per_sm * sms || &pick == &kPicks[sizeof(kPicks) / sizeof(kPicks[0]) - 1]) {
      c.run(a, split_for(c, tiles, a, sms));
      return;
    }
  }
}

}  // namespace rungs::sgemm::warptile
