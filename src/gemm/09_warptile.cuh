// The kernel of rung 09 (warptile; what it adds and what bounds it: 09_warptile.cu) and its tile
// configurations. Two places compile it: the library (09_warptile.cu) for the configurations
// dispatch picks, declared at the end of this file, and the tuner (src/tune/warptile.cu, the
// rungs_tune library behind `rungs tune gemm` and the tests) for every other candidate. The tuner
// runs the picked ones through the library's own kernels (the extern template declarations below),
// so each kernel is compiled once and the tuner times exactly what dispatch runs.
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

#include <algorithm>
#include <memory>
#include <type_traits>

namespace rungs::sgemm::warptile {

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
// row stride n); sum_splits then forms C = alpha * (ws[0] + ws[1] + ...) + beta * C in that
// order. ws == nullptr: no split, the block finishes C itself.
struct SplitK {
  float* ws = nullptr;
  int k_len = 0;
};

// A_KC / B_KC: operand stored k-contiguous (A with ta == N, B with tb == T); see gemm_pipeline.cuh.
template <class T, bool A_KC, bool B_KC>
__global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
    warptile_kernel(const detail::GemmParams p, const SplitK sk) {
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

// C = alpha * (ws[0] + ... + ws[splits-1]) + beta * C over a's m x n, summed in split order
// (09_warptile.cu): the second kernel of a split product, on a.stream.
void sum_splits(const Args& a, const float* ws, int splits);

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
  if (splits > 1) sum_splits(a, sk.ws, splits);
}

// One entry of a configuration list: the tile's parameters (dispatch reads bm, bn and min_blocks;
// the tuner names the entry after all of them) and the function that runs it.
struct Config {
  int bm, bn, bk, wm, wn, tm, tn, stages;
  int min_blocks;  // blocks per SM the configuration is built for
  int rs, ku, order;
  int splits;  // k cut into this many pieces (1: none); the tuner's entries only, dispatch picks its own
  void (*run)(const Args&, int splits);
};
template <class T>
constexpr Config config(int splits = 1) {
  return {T::BM, T::BN, T::BK, T::WM, T::WN, T::TM, T::TN, T::STAGES, T::MIN_BLOCKS, T::RS, T::KU, T::ORDER, splits,
          launch_any<T>};
}

// The configurations dispatch picks (09_warptile.cu, kPicks; the measurements are there):
// BM, BN, BK, WM, WN, TM, TN, STAGES, min blocks per SM, RS, KU, ORDER. The library compiles their
// four transposes each; every other translation unit uses those instantiations.
using Small = Tile<64, 64, 16, 32, 32, 8, 4, 3, 4>;                 // 128 thr, 4 blocks/SM: the most blocks
using MidUO = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 0, 4, 1>;       // 128 thr, 4 blocks/SM, for mid sizes
using Wide32UO = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4, 1>;  // 256 thr, 16x8 per thread, 1 block/SM
using Wide64UO = Tile<128, 256, 64, 64, 64, 16, 8, 2, 1, 0, 4, 1>;  // Wide32UO with 2 stages of BK = 64
using Tall32UO = Tile<256, 128, 32, 64, 64, 16, 8, 3, 1, 0, 4, 1>;  // Wide32UO's transpose, for B stored n x k
extern template void launch_any<Small>(const Args&, int);
extern template void launch_any<MidUO>(const Args&, int);
extern template void launch_any<Wide32UO>(const Args&, int);
extern template void launch_any<Wide64UO>(const Args&, int);
extern template void launch_any<Tall32UO>(const Args&, int);

}  // namespace rungs::sgemm::warptile
