// The warp-specialized family's frame (rungs 15-17, 19-23 and 28-30) and rung 15's parts: a
// persistent, clustered wgmma GEMM (sm_90a) in which warpgroup 0 produces (one thread issues every
// TMA load) and warpgroups 1 and 2 consume 64 rows each of a 128-row tile (wgmma from shared
// memory, or with A through registers). A rung is the frame composed from four parts,
// `Parts<Schedule, Mainloop, Epilogue, Accumulation>`:
//  - Schedule: which tiles (and which k tiles of them) each cluster runs, and in what order:
//      RoundRobin (here, rung 15), StreamK (19_wgmma_streamk.cu), Balanced (23_wgmma_balanced.cu);
//  - Mainloop: how a tile's k tiles reach shared memory and how wide they are multiplied (the
//      loads and k loops, load_piece and multiply_piece, serve the TmaStages ones): WholeTiles
//      (here: always BN), Ragged (20_wgmma_ragged.cuh: the narrowest wgmma width that holds the
//      tile's columns), Paired (23_wgmma_balanced.cu: Ragged with a narrow tile's k tiles two a
//      stage), X3 (wgmma_x3.cuh: 3xTF32's split operands, 128-column tiles); a mainloop also
//      fixes the stage ring (RING stages of RING_STAGE_BYTES), the tile's width (TILE_N), the
//      accumulator's registers (ACC) and the tensor maps the kernel takes (Maps);
//  - Epilogue: how a consumer's 64 x 256 accumulator reaches C: DirectStore (here: from registers),
//      TmaStore (17_wgmma_tma_store.cuh), Overlap (21_wgmma_overlap.cu), Staged<TmaStore>
//      (20_wgmma_ragged.cuh: C that TMA cannot store written by the producer's idle warps);
//  - Accumulation, defaulted: where the k loop's sums live: InTensorCore (here: the wgmma
//      accumulator over all of k, the mainloop's k loop), Promote (29_wgmma_fp8_promote.cu: fp8
//      partial sums added into fp32 registers every k tile, block128 scales applied there),
//      OrderedPromote (30_wgmma_fp8_overlap.cu: Promote with the two consumers taking turns on the
//      tensor core, so that one's promotion runs under the other's MMAs), SumPerStage
//      (wgmma_x3.cuh: each stage's products summed apart and added in fp32).
// fp8 problems (rungs 28, 29, 30) run the same frame with the element type Fp8<TA8, TB8, TC>
// (below): the mainloop's stage issues fp8 wgmmas, the accumulation applies the scales.
// Each rung file names its parts; the part a rung adds lives in that rung's file, or in a header
// beside it when a later rung reuses it. The frame holds what every rung shares: the stage ring
// and its barriers, the warpgroups' roles, the per-piece calls into the parts, and the launch.
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/mma_stage.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <cuda_fp8.h>

#include <memory>
#include <string>
#include <type_traits>

namespace rungs::sgemm::ws {

using detail::ceil_div;

constexpr int BM = 128, BN = 256, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CLUSTER = 2;  // blocks along m sharing B (1 measured 0.73-0.82x cuBLAS bf16, 2: 0.77-0.96x)
constexpr int ROW = 128;                                         // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KB
constexpr int C_BYTES = 16384;  // each consumer's C staging buffer (64 rows x 256 bytes), where used
constexpr int B_PAIR = 64 * ROW;  // Mainloop::pairs: B of one k tile of a tile 64 columns wide
constexpr int BAND = 8;  // cluster rows per band of the tile order

// The frame's element type T: float (tf32), __half, __nv_bfloat16 (A, B and C all of T), or an
// fp8 problem, Fp8<TA8, TB8, TC> (rung 28): A and B fp8 (e4m3 or e5m2 each), C bf16 or float.
// Problem<T> says which is which, and the kernel's arguments: ArgsT<T>, or ArgsFp8 (ArgsT's fields
// typed, plus the scales).
template <typename TA8, typename TB8, typename TC>
struct Fp8 {};
template <typename TA8, typename TB8, typename TC>
struct ArgsFp8 {
  Trans ta, tb;
  int64_t m, n, k;
  float alpha;
  const TA8* A;
  int64_t lda;
  const TB8* B;
  int64_t ldb;
  float beta;
  TC* C;
  int64_t ldc;
  cudaStream_t stream;
  Scales scales;
};
template <typename T>
struct Problem {
  using A = T;
  using B = T;
  using C = T;
  using Args = ArgsT<T>;
  static constexpr bool fp8 = false;
};
template <typename TA8, typename TB8, typename TC>
struct Problem<Fp8<TA8, TB8, TC>> {
  using A = TA8;
  using B = TB8;
  using C = TC;
  using Args = ArgsFp8<TA8, TB8, TC>;
  static constexpr bool fp8 = true;
};

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row (128 fp8 elements)
  return ROW / int(sizeof(typename Problem<T>::A));
}

struct InTensorCore;

// A rung: the frame composed from its parts (see the top of this file).
template <class S, class M, class E, class A = InTensorCore>
struct Parts {
  using Schedule = S;
  using Mainloop = M;
  using Epilogue = E;
  using Accumulation = A;
};

// The tiles of cluster-tile t: the cluster's pair of tile rows (2 * cm, 2 * cm + 1) and column tn.
__device__ __forceinline__ void cluster_tile(int t, int cluster_rows, int tiles_n, int& cm, int& tn) {
  detail::swizzle_tile(t, cluster_rows, tiles_n, BAND, cm, tn);
}
// This block's tile of cluster tile (cm, tn): the cluster's tile rows 2 cm, 2 cm + 1, column tn
// (tiles TBN columns wide: the mainloop's).
template <int TBN = BN>
__device__ __forceinline__ void tile_origin(int cm, int tn, uint32_t rank, int& m0, int& n0) {
  m0 = (cm * CLUSTER + static_cast<int>(rank)) * BM, n0 = tn * TBN;
}

// What a schedule's host side is given to plan a launch.
struct Grid {
  int64_t tiles_m, tiles_n, cluster_tiles;
  int clusters;  // resident at once: the persistent grid
  int kt;        // k tiles per tile
  int64_t m, n;
  cudaStream_t stream;
  std::unique_ptr<detail::Scratch>*keep_ws, *keep_flags;  // scratch a schedule needs, freed after the kernel
};

// ---- Rung 15's parts ----

// The banded order (8 cluster rows per band, so the tiles in flight share A and B panels in L2):
// this block's tile of cluster tile t, tiles TBN columns wide. A schedule's walk over whole or split
// tiles builds on it.
template <int TBN>
struct BandedTiles {
  detail::ClusterWalk walk;
  int tiles_n;
  uint32_t rank;
  __device__ __forceinline__ BandedTiles(int tiles_m, int tiles_n_, uint32_t rank_)
      : walk(detail::cluster_walk(tiles_m, tiles_n_, CLUSTER)), tiles_n(tiles_n_), rank(rank_) {}
  // This block's tile of piece p (of cluster tile t); solo: see Balanced.
  __device__ __forceinline__ void tile(int, int t, int& m0, int& n0, bool& solo) const {
    int cm, tn;
    cluster_tile(t, walk.rows, tiles_n, cm, tn);
    tile_origin<TBN>(cm, tn, rank, m0, n0);
    solo = false;
  }
};

// Schedule: cluster tiles dealt round-robin, cluster c running tiles c, c + G, c + 2G, ... of the
// banded order, each tile whole (k tiles 0 .. kt - 1).
struct RoundRobin {
  static constexpr bool whole_tiles = true;   // every piece is a whole tile
  static constexpr bool wide_producer = false;  // the producer warpgroup needs more than 40 registers
  static constexpr int rs_in_flight = 1;  // tf32 register path: wgmma groups left in flight per k tile
  struct Params {
    int kt = 0;
  };
  static Params plan(const Grid& g) { return Params{g.kt}; }
  // The walk over tiles TBN columns wide (the mainloop's width).
  template <int TBN>
  struct Walk : BandedTiles<TBN> {
    using BandedTiles<TBN>::walk;
    Params sp;
    int count;
    __device__ __forceinline__ Walk(const Params& p, int tiles_m, int tiles_n_, uint32_t rank_)
        : BandedTiles<TBN>(tiles_m, tiles_n_, rank_), sp(p) {
      count = walk.first < walk.count ? (walk.count - walk.first + walk.stride - 1) / walk.stride : 0;
    }
    // Piece p: cluster tile t, k tiles kb .. ke - 1.
    __device__ __forceinline__ void piece(int p, int& t, int& kb, int& ke) const {
      t = walk.first + p * walk.stride, kb = 0, ke = sp.kt;
    }
    __device__ __forceinline__ void locate(int p, int& m0, int& n0, bool& solo, int& kb, int& ke) const {
      int t;
      piece(p, t, kb, ke);
      this->tile(p, t, m0, n0, solo);
    }
    // After piece p's k loop: its tile's C goes out (a schedule that splits tiles adds partial sums).
    template <int R, class Store>
    __device__ __forceinline__ void finish(float (&)[R], int, int, int, Store&& store) const {
      store();
    }
  };
};

// Epilogue: each consumer stores its accumulator straight from registers (4 bytes per lane, masked
// at m and n; beta * C added when beta != 0).
struct DirectStore {
  static constexpr bool buffers = false;  // a 16 KB shared buffer per consumer (C_BYTES)
  static constexpr bool tma = false;      // a tensor map of C (stores with beta == 0, C aligned)
  static constexpr bool storers = false;  // the producer warpgroup's idle warps store C
  // T: C's type; Args: ArgsT<T> or ArgsFp8; R: the accumulator's registers (64 x 2R per consumer).
  template <typename T, bool C_T, class Args, int R>
  static __device__ __forceinline__ void store(const float (&d)[R], const Args& a, int m0, int n0, int cw,
                                               bool c_vec) {
    if constexpr (C_T)  // C^T's rows m0 + 64 cw .. are C's columns
      detail::store_acc_64xn_t<T, 2 * R>(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m),
                                         static_cast<int>(a.n), a.alpha, a.beta);
    else
      detail::store_acc_64xn<T, 2 * R>(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n),
                                       a.alpha, a.beta, c_vec);
  }
  // A consumer's epilogue state (none here) and its steps, as the frame calls them.
  template <typename T, bool C_T>
  struct Consumer {
    template <class Ctx>
    __device__ __forceinline__ void in_mainloop(const Ctx&, int) {}  // k tile kb + i's MMAs issued
    template <class Ctx>
    __device__ __forceinline__ void after_mainloop(const Ctx&, int) {}  // the tile's k tiles done
    template <class Ctx, int R>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[R], int m0, int n0) {
      DirectStore::store<T, C_T>(d, x.a, m0, n0, x.cw, x.c_vec);
    }
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx&) {}  // after the last tile
  };
};

// ---- fp8 (rung 28's instruction selection and scales, here because the frame calls them) ----

// One stage's MMAs for warpgroup `half`: fp8 (both operands K-major, n256: WholeTiles only) or T's.
template <typename T, bool A_MN, bool B_MN, int N>
__device__ __forceinline__ void mma_stage(float (&d)[128], const unsigned char* As, const unsigned char* Bs, int half) {
  using Pr = Problem<T>;
  if constexpr (Pr::fp8) {
    static_assert(!A_MN && !B_MN && N == BN, "fp8: K-major operands, whole tiles");
    detail::wgmma_stage_64x256_fp8<typename Pr::A, typename Pr::B>(d, As, Bs, half);
  } else {
    detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As, Bs, half);
  }
}

// fp8: the scales that do not depend on k, applied to a consumer's 64 x 256 accumulator (C's rows
// row0 .., columns col0 ..; layout as in detail::store_acc_64xn) before the epilogue stores it:
// tensor: acc * a[0] * b[0]; outer: acc(i, j) * a[i] * b[j]. Rows past m and columns past n read no
// scale (their products are not stored). block128 scales depend on k: applied where the partial
// sums are promoted (rung 29), nothing to do here (rung 28 refuses them).
template <class Args>
__device__ __forceinline__ void scale_acc_fp8(float (&d)[128], const Args& a, int row0, int col0) {
  const float* __restrict__ sa = a.scales.a;
  const float* __restrict__ sb = a.scales.b;
  if (a.scales.kind == Scaling::block128) return;
  if (a.scales.kind == Scaling::tensor) {
    const float s = __ldg(sa) * __ldg(sb);
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] *= s;
    return;
  }
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
  float ra[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + 16 * w + g + 8 * h;
    ra[h] = r < m ? __ldg(sa + r) : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < 32; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int c = col0 + 8 * j + 2 * q + e;
      const float cb = c < n ? __ldg(sb + c) : 0.0f;
      d[4 * j + e] *= ra[0] * cb, d[4 * j + 2 + e] *= ra[1] * cb;
    }
}

// ---- The mainloop: the producer's loads and the consumers' k loops ----
// A Mainloop part (WholeTiles here, Ragged in 20_wgmma_ragged.cuh, Paired in 23_wgmma_balanced.cu)
// says how wide a tile is multiplied (width: BN, or as wide as its columns), whether a narrow
// tile's stages hold two k tiles (two), and picks the consumer's loop width (multiply). The loads
// and loops below serve every Mainloop part; the frame calls them once per piece.

// The producer's loads of piece p (one thread): each k tile's A (this block's rows) and B (the
// cluster's shared columns, each block loading its share and multicasting it), stage after stage
// through the ring; `it` counts the block's fills over all its pieces.
template <class M, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased>
__device__ __forceinline__ void load_piece(const Walk& walk, int p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                           const CUtensorMap& map_b64, unsigned char* smem, uint64_t* full, int n,
                                           uint32_t rank, int& it, WaitReleased&& wait_released) {
  constexpr int BK = bk<T>();
  int m0, n0, kb, ke;
  bool solo;
  walk.locate(p, m0, n0, solo, kb, ke);
  // Only the B columns the tile multiplies (the same in both blocks of the cluster, but for a
  // short pair's).
  const int nb = M::width(n - n0);
  const bool two = M::two(nb, solo);
  const int b_bytes = two ? B_PAIR : B_MN ? nb / 64 * BK * ROW : (nb > BN / CLUSTER ? B_BYTES : B_BYTES / CLUSTER);
  for (int kt = kb; kt < ke; kt += two ? 2 : 1, ++it) {
    const int s = it % STAGES;
    wait_released(it);
    unsigned char* st = smem + s * STAGE_BYTES;
    uint64_t* bar = &full[s];
    const int tiles = two && kt + 1 < ke ? 2 : 1;  // k tiles in this stage
    // A (own) + B from both blocks, per k tile
    detail::mbar_expect_tx(bar, tiles * (A_BYTES + (M::ragged ? b_bytes : B_BYTES)));
    for (int h = 0; h < tiles; ++h) {  // k tile kt + h: A at st + h A_BYTES, B after both A's
      const int k0 = (kt + h) * BK;
      unsigned char* sa = st + h * A_BYTES;
      if constexpr (A_MN) {  // boxes of BK k-rows x 128 bytes of m (64 16-bit, 32 tf32 elements)
        constexpr int MN_BOX = ROW / int(sizeof(T));
        for (int j = 0; j < BM / MN_BOX; ++j) detail::tma_load_2d(sa + j * BK * ROW, &map_a, m0 + MN_BOX * j, k0, bar);
      } else {
        detail::tma_load_2d(sa, &map_a, k0, m0, bar);
      }
      unsigned char* sb = st + (two ? 2 * A_BYTES + h * B_PAIR : A_BYTES);
      constexpr uint16_t all = (1u << CLUSTER) - 1;
      if (!B_MN && two) {  // 64 rows of n, k-contiguous, from block 0 to both
        if (rank == 0) detail::tma_load_2d_multicast(sb, &map_b64, k0, n0, bar, all);
      } else if (solo) {  // a short pair: all of its own B, the same boxes, no multicast
        if constexpr (B_MN) {
          for (int j = 0; j < BN / 64 && 64 * j < nb; ++j)
            detail::tma_load_2d(sb + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar);
        } else {
          for (int r = 0; r < CLUSTER && r * (BN / CLUSTER) < nb; ++r)
            detail::tma_load_2d(sb + r * (B_BYTES / CLUSTER), &map_b, k0, n0 + r * (BN / CLUSTER), bar);
        }
      } else if constexpr (B_MN) {  // this block's BN / 64 / CLUSTER boxes of BK k-rows x 64 n
        constexpr int per = BN / 64 / CLUSTER;
        for (int j = int(rank) * per; j < int(rank + 1) * per && 64 * j < nb; ++j)
          detail::tma_load_2d_multicast(sb + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar, all);
      } else if (!M::ragged || int(rank) * (BN / CLUSTER) < nb) {  // this block's BN / CLUSTER rows of n
        detail::tma_load_2d_multicast(sb + rank * (B_BYTES / CLUSTER), &map_b, k0, n0 + int(rank) * (BN / CLUSTER),
                                      bar, all);
      }
    }
  }
}

// A consumer's k loop over k tiles kb .. ke - 1 of piece p, its sums in the tensor core's
// accumulator d, multiplying the first N columns of B a stage (the width M picks for the tile;
// two: stages of two k tiles). `it` counts the consumer's stages over all its pieces; release(slot):
// both blocks' producers may refill the slot. The epilogue's in_mainloop hook runs after each k
// tile's MMAs are issued.
template <class M, class S, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx, class Release>
__device__ __forceinline__ void multiply_piece(float (&d)[128], const Walk& walk, int p, int t, int kb, int ke,
                                               const unsigned char* smem, uint64_t* full, int cw, int& it, Epi& epi,
                                               const Ctx& ctx, Release&& release, int64_t m, int64_t n) {
  constexpr bool RS = std::is_same_v<T, float> && A_MN;
  auto mainloop = [&](auto width, bool two) {
    constexpr int N = decltype(width)::value;
    if constexpr (RS) {
      // A's fragments through registers, double-buffered: while stage it's MMAs run (reading
      // one fragment set), the fragments of stage it + 1 are loaded into the other, after
      // wait<1> has retired the group that read it (stage it - 1). Two sets by name (fa, fb),
      // the loop unrolled by two, so no register array is indexed at run time.
      // M::pairs, a narrow tile: stages of two k tiles (A, A', B, B') here too, each k tile
      // still a step of its own: k tile kt is half h = (kt - kb) % 2 of stage it (A at
      // h A_BYTES, B at 2 A_BYTES + h B_PAIR); a stage's first half releases the stage before
      // (wait<1> has retired its last half). The same loop (a second loop for the pairs made
      // ptxas serialize the kernel's wgmmas, C7512: register resources).
      uint32_t fa[16], fb[16];
      const bool pair = M::pairs && N == 64 && two;
      auto load = [&](uint32_t (&f)[16], int u, int h) {
        const int s = u % STAGES;
        if (h == 0) detail::mbar_wait(&full[s], (u / STAGES) & 1);
        detail::load_a_frags_mn_tf32(f, smem + s * STAGE_BYTES + h * A_BYTES, cw);
      };
      auto step = [&](const uint32_t (&cur)[16], uint32_t (&nxt)[16], int kt) {
        const int h = pair ? (kt - kb) & 1 : 0;
        detail::wgmma_fence();
        detail::wgmma_stage_64xn_rs<N>(d, cur,
                                       smem + (it % STAGES) * STAGE_BYTES + (pair ? 2 * A_BYTES + h * B_PAIR : A_BYTES));
        detail::wgmma_commit();
        // Stage it - 1's MMAs have retired: its slot and nxt are free (a schedule whose
        // finishing code spills with a group in flight across stages waits for stage it's too).
        detail::wgmma_wait<S::rs_in_flight>();
        if (kt > kb && h == 0) release((it - 1) % STAGES);
        const bool done = h == 1 || !pair || kt + 1 == ke;  // the stage's last k tile
        if (kt + 1 < ke) load(nxt, done ? it + 1 : it, done ? 0 : 1);
        if (done) ++it;
      };
      if (kb < ke) load(fa, it, 0);
      int kt = kb;
      for (; kt + 1 < ke; kt += 2) step(fa, fb, kt), step(fb, fa, kt + 1);
      if (kt < ke) step(fa, fb, kt);
      detail::wgmma_wait<0>();
      if (ke > kb) release((it - 1) % STAGES);
    } else {
      // M::pairs: a stage of two k tiles is a loop step of its own (a branch between the two
      // stages' wgmmas made ptxas serialize every wgmma of the kernel: C7520).
      if constexpr (M::pairs && N == 64) {
        int kt = kb;
        for (; two && kt + 1 < ke; kt += 2, ++it) {
          const int s = it % STAGES;
          detail::mbar_wait(&full[s], (it / STAGES) & 1);
          const unsigned char* As = smem + s * STAGE_BYTES;
          const unsigned char* Bs = As + 2 * A_BYTES;  // B, then B' 8 KB on
          detail::wgmma_fence();
          mma_stage<T, A_MN, B_MN, N>(d, As, Bs, cw);
          mma_stage<T, A_MN, B_MN, N>(d, As + A_BYTES, Bs + B_PAIR, cw);
          detail::wgmma_commit();
          detail::wgmma_wait<1>();
          if (kt > kb) release((it - 1) % STAGES);
        }
        if (two && kt < ke) {  // an odd last k tile, alone in its stage (B after both A's)
          const int s = it % STAGES;
          detail::mbar_wait(&full[s], (it / STAGES) & 1);
          const unsigned char* As = smem + s * STAGE_BYTES;
          detail::wgmma_fence();
          mma_stage<T, A_MN, B_MN, N>(d, As, As + 2 * A_BYTES, cw);
          detail::wgmma_commit();
          detail::wgmma_wait<1>();
          if (kt > kb) release((it - 1) % STAGES);
          ++it;
        }
        if (two) {
          detail::wgmma_wait<0>();
          if (ke > kb) release((it - 1) % STAGES);
          return;
        }
      }
      for (int kt = kb; kt < ke; ++kt, ++it) {
        const int s = it % STAGES;
        detail::mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned char* As = smem + s * STAGE_BYTES;
        const unsigned char* Bs = As + A_BYTES;
        detail::wgmma_fence();
        mma_stage<T, A_MN, B_MN, N>(d, As, Bs, cw);
        detail::wgmma_commit();
        epi.in_mainloop(ctx, kt - kb);
        detail::wgmma_wait<1>();  // the MMAs of k tile it - 1 have retired: release its slot
        if (kt > kb) release((it - 1) % STAGES);
      }
      detail::wgmma_wait<0>();
      if (ke > kb) release((it - 1) % STAGES);
    }
  };
  M::multiply(walk, p, t, m, n, cw, [](int nb, bool solo) { return M::two(nb, solo); }, mainloop);
}

// The mainloops of 128 x 256 tiles in stages of one 128-byte row of k (TMA, 128-byte swizzle):
// WholeTiles, Ragged and Paired share the stage ring's shape, the tensor maps (A, B, and B in boxes
// of 64 rows for Paired), and the loads and k loops above (Self: the mainloop part itself).
struct TmaStages {
  static constexpr int TILE_N = BN, RING = STAGES, RING_STAGE_BYTES = STAGE_BYTES;
  static constexpr int ACC = 128;  // accumulator registers per consumer thread (64 x 256 fp32)
  struct Maps {
    CUtensorMap a, b, b64;  // b64: Paired's narrow tiles (B k-contiguous)
  };
  template <class Self, typename T, bool A_MN, bool B_MN>
  static Maps make_maps(const typename Problem<T>::Args& a) {
    using Pr = Problem<T>;
    constexpr int BK = bk<T>(), E_SIZE = int(sizeof(typename Pr::A));
    static_assert(sizeof(typename Pr::A) == sizeof(typename Pr::B), "A and B elements of one size");
    const auto type = detail::tma_operand_type<typename Pr::A>(), type_b = detail::tma_operand_type<typename Pr::B>();
    Maps m;
    m.a = A_MN ? detail::make_tensor_map_2d(a.A, type, E_SIZE, a.k, a.m, a.lda, BK, ROW / E_SIZE)
               : detail::make_tensor_map_2d(a.A, type, E_SIZE, a.m, a.k, a.lda, BM, BK);
    m.b = B_MN ? detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.k, a.n, a.ldb, BK, ROW / E_SIZE)
               : detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.n, a.k, a.ldb, BN / CLUSTER, BK);
    // Self::pairs, B k-contiguous: boxes of 64 rows of n for the narrow tiles' paired stages.
    m.b64 = Self::pairs && !B_MN ? detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.n, a.k, a.ldb, 64, BK)
                                 : CUtensorMap{};
    return m;
  }
  // The maps the producer will read, fetched while the barriers are set up (thread 0).
  template <class Self, bool B_MN>
  static __device__ __forceinline__ void prefetch(const Maps& maps) {
    detail::tma_prefetch(&maps.a), detail::tma_prefetch(&maps.b);
    if (Self::pairs && !B_MN) detail::tma_prefetch(&maps.b64);
  }
  template <class Self, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased>
  static __device__ __forceinline__ void load(const Walk& walk, int p, const Maps& maps, unsigned char* smem,
                                              uint64_t* full, int n, uint32_t rank, int& it,
                                              WaitReleased&& wait_released) {
    load_piece<Self, T, A_MN, B_MN>(walk, p, maps.a, maps.b, maps.b64, smem, full, n, rank, it, wait_released);
  }
};

// ---- Rung 15's mainloop ----

// Mainloop: every tile multiplies all BN columns of B, one k tile a stage.
struct WholeTiles : TmaStages {
  static constexpr bool ragged = false;  // tiles narrower than BN (a narrower B load and wgmma)
  static constexpr bool pairs = false;   // stages of two k tiles for a narrow tile
  __device__ __forceinline__ static int width(int) { return BN; }
  __device__ __forceinline__ static bool two(int, bool) { return false; }
  // The consumer's k loop for piece p: mainloop(width, two) at the width of the tile.
  template <class Walk, class Mainloop, class Paired>
  __device__ __forceinline__ static void multiply(const Walk&, int, int, int64_t, int64_t, int, Paired&&,
                                                  Mainloop&& mainloop) {
    mainloop(std::integral_constant<int, BN>{}, false);
  }
};

// Accumulator (every rung but 29 and 30): the tensor core's accumulator over the tile's whole k,
// the mainloop's k loop as it is. fp8: the scales that do not depend on k applied before the store
// (scale_acc_fp8). Promote (29_wgmma_fp8_promote.cu) and OrderedPromote (30_wgmma_fp8_overlap.cu)
// run their own k loop over the mainloop's stages, adding partial sums into fp32 registers.
struct InTensorCore {
  template <class M, class S, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[128], const Walk& walk, int p, int t, int kb, int ke,
                                                  const typename Problem<T>::Args& a, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi& epi, const Ctx& ctx,
                                                  Release&& release) {
    multiply_piece<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, smem, full, cw, it, epi, ctx, release, a.m, a.n);
  }
  // Before the tile's store: fp8's tensor or outer scales (nothing for other types).
  template <typename T>
  static __device__ __forceinline__ void scale(float (&d)[128], const typename Problem<T>::Args& a, int row0,
                                               int col0) {
    if constexpr (Problem<T>::fp8) scale_acc_fp8(d, a, row0, col0);
  }
  static __device__ __forceinline__ void after_tiles(int, int) {}  // after the consumer's last tile
};

// ---- The frame ----

// A consumer's view of its block, for the epilogue parts.
template <typename T>
struct ConsumerCtx {
  const typename Problem<T>::Args& a;
  const CUtensorMap* map_c;
  unsigned char* buf;  // this consumer's C buffer (parts with buffers)
  uint64_t *c_full, *c_empty;  // this consumer's hand-over barriers (parts with storers)
  int64_t tma_cols;  // columns C's TMA stores may write (0: none)
  int cw, tid;
  bool c_vec;
};

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
// tf32 (T = float): B_MN never; A_MN reads A through registers (wgmma's register form: the
// shared-memory form reads K-major operands only). C_T (tf32): the launch swapped the operands
// (C^T = B^T A^T, so that an n-contiguous B is this kernel's A_MN operand): the kernel's m x n
// result is C's transpose, stored as such.
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
__global__ void __launch_bounds__(THREADS, 1)
    wgmma_ws_kernel(const __grid_constant__ typename P::Mainloop::Maps maps, const __grid_constant__ CUtensorMap map_c,
                    typename Problem<T>::Args a, int tiles_m, int tiles_n, bool c_vec, int64_t tma_cols,
                    typename P::Schedule::Params sp) {
  using S = typename P::Schedule;
  using M = typename P::Mainloop;
  using E = typename P::Epilogue;
  using Ac = typename P::Accumulation;
  constexpr int STAGES = M::RING, STAGE_BYTES = M::RING_STAGE_BYTES;  // the mainloop's stage ring
  constexpr bool TF32 = std::is_same_v<T, float>, FP8 = Problem<T>::fp8;
  using TC = typename Problem<T>::C;  // C's element type (T but for fp8)
  static_assert(!(TF32 && B_MN) && (!C_T || TF32), "tf32: B K-major; C_T for tf32 only");
  static_assert(!FP8 || !E::storers, "fp8: the consumers store C (mma_stage: K-major operands, whole tiles)");
  static_assert(!E::storers || S::whole_tiles, "the storer warps walk whole tiles only");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  unsigned char* c_buf = smem + STAGES * STAGE_BYTES;  // E::buffers: the consumers' C buffers
  uint64_t* full = reinterpret_cast<uint64_t*>(c_buf + (E::buffers ? CONSUMERS * C_BYTES : 0));
  uint64_t* empty = full + STAGES;
  // E::storers: consumer w's C buffer holds a chunk for its storer warp / is free again.
  uint64_t* c_full = empty + STAGES;
  uint64_t* c_empty = c_full + CONSUMERS;
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  // The maps this block's TMA will read, fetched while the barriers are set up: the producer's,
  // and C's for the consumers' stores where they use it.
  if (tid == 0) M::template prefetch<M, B_MN>(maps);
  if (E::tma && tid == 128 && tma_cols > 0) detail::tma_prefetch(&map_c);
  detail::init_pipeline_barriers(full, empty, STAGES, CONSUMERS * CLUSTER);
  if constexpr (E::storers) E::init_barriers(c_full, c_empty, tid);
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  // TAIL: no cluster barrier at the kernel's end; the producer's tail keeps the block until
  // nothing of the peer's can reach it. With storer warps the barrier stays (their producer
  // warpgroup spilled with the tail).
  constexpr bool TAIL = !E::storers;
  const typename S::template Walk<M::TILE_N> walk(sp, tiles_m, tiles_n, rank);

  if (wg == 0) {
    detail::setmaxnreg_dec<S::wide_producer && !TF32 ? 56 : 40>();
    if (tid == 0) {
      int it = 0;  // k tiles issued by this block so far, over all its tiles: slot it % STAGES
      // Fill i (use i / STAGES of slot i % STAGES) needs the slot's use before it released by the
      // consumers of both blocks (the first STAGES fills need nothing).
      auto wait_released = [&](int i) {
        if (i >= STAGES) detail::mbar_wait(&empty[i % STAGES], ((i / STAGES) - 1) & 1);
      };
      for (int p = 0; p < walk.count; ++p)
        M::template load<M, T, A_MN, B_MN>(walk, p, maps, smem, full, static_cast<int>(a.n), rank, it, wait_released);
      if constexpr (TAIL) {
        // The block may leave once every stage it filled has been released by the consumers of
        // both blocks: then no remote arrive or multicast into it is still on its way (CUTLASS's
        // producer tail, in place of a cluster barrier at the kernel's end).
        for (int j = 0; j < STAGES; ++j) wait_released(it + j);
      }
    } else if constexpr (E::storers) {
      E::template storer<T, C_T>(walk, a, tma_cols, c_buf, c_full, c_empty, tid);
    }
  } else {
    detail::setmaxnreg_inc<S::wide_producer && !TF32 ? 216 : 232>();
    const int cw = wg - 1;  // this consumer's 64 rows of the 128-row tile
    auto release = [&](int slot) {  // both blocks' producers may refill `slot`
      if (tid % 128 == 0)
        for (uint32_t c = 0; c < CLUSTER; ++c) detail::mbar_arrive_cluster(&empty[slot], c);
    };
    const ConsumerCtx<T> ctx{a, &map_c, c_buf + cw * C_BYTES, &c_full[cw], &c_empty[cw], tma_cols, cw, tid, c_vec};
    typename E::template Consumer<TC, C_T> epi;
    int it = 0;
    float d[M::ACC];
    for (int p = 0; p < walk.count; ++p) {
      int t = 0, kb = 0, ke = 0;
      walk.piece(p, t, kb, ke);
#pragma unroll
      for (int i = 0; i < M::ACC; ++i) d[i] = 0.0f;
      Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, a, smem, full, cw, it, epi, ctx, release);
      epi.after_mainloop(ctx, ke - kb);
      auto store_tile = [&] {
        int m0, n0;  // (found only now: fewer registers held beside the accumulators)
        bool solo;
        walk.tile(p, t, m0, n0, solo);
        Ac::template scale<T>(d, a, m0 + 64 * cw, n0);
        epi.store(ctx, d, m0, n0);
      };
      walk.finish(d, kb, ke, cw, store_tile);
    }
    Ac::after_tiles(cw, it);
    epi.finish(ctx);
  }
  // TAIL: no cluster barrier here; the producer's tail above keeps the block until nothing of the
  // peer's can still reach it.
  if constexpr (!TAIL) detail::cluster_sync();  // no block leaves while its peer may still signal or write into it
}

template <class M, class E>
constexpr int smem_bytes() {
  return M::RING * M::RING_STAGE_BYTES + (E::buffers ? CONSUMERS * C_BYTES : 0) + 1024 /* alignment */ +
         (2 * M::RING + 2 * CONSUMERS) * 8 /* barriers */;
}

// One persistent cluster grid of the rung P over the problem a, its operands read through `maps`
// (the mainloop's, built by the caller).
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
void launch(const typename Problem<T>::Args& a, const typename P::Mainloop::Maps& maps, const char* name) {
  using S = typename P::Schedule;
  using M = typename P::Mainloop;
  using E = typename P::Epilogue;
  using Pr = Problem<T>;
  // C_SIZE: C's element bytes.
  constexpr int BK = bk<T>(), C_SIZE = int(sizeof(typename Pr::C));
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, M::TILE_N);
  const int64_t cluster_tiles = ceil_div(tiles_m, CLUSTER) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported(std::string("rungs: ") + name + ": too many tiles for one launch");
  auto* kernel = &wgmma_ws_kernel<T, A_MN, B_MN, C_T, P>;
  constexpr int SMEM_BYTES = smem_bytes<M, E>();
  static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int fit = detail::max_active_clusters(reinterpret_cast<const void*>(kernel), THREADS, SMEM_BYTES, CLUSTER, name);
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * C_SIZE) == 0 && a.ldc % 2 == 0;
  // TMA stores need C's base and rows 16-byte aligned, and write alpha * AB only: beta != 0 (or an
  // unaligned C) takes the direct epilogue. They clip a row at the 16-byte chunk that holds column
  // n - 1, not at n (measured on the H100: n = 1, ldc = 16 wrote 7 elements of bf16 padding; also
  // triton-lang/triton#11583): where n * sizeof(T) is not a multiple of 16, only tiles whose 256
  // columns lie inside C use them (tma_cols = n), the last tile column stores directly.
  const bool tma_c = E::tma && a.beta == 0.0f && reinterpret_cast<uintptr_t>(a.C) % 16 == 0 && (a.ldc * C_SIZE) % 16 == 0;
  // C_T: C is n x m here (C's columns are this kernel's rows): the clipped dimension is m.
  const int64_t c_cols = C_T ? a.m : a.n, c_rows = C_T ? a.n : a.m;
  const int64_t tma_cols = !tma_c ? 0 : (c_cols * C_SIZE) % 16 == 0 ? INT64_MAX : c_cols;
  const CUtensorMap mc = tma_c ? detail::make_tensor_map_2d(a.C, detail::tma_type<typename Pr::C>(), C_SIZE, c_rows,
                                                            c_cols, a.ldc, 64, 128 / C_SIZE)
                               : CUtensorMap{};
  std::unique_ptr<detail::Scratch> ws, flags;  // freed on the stream after the kernel
  const Grid g{tiles_m, tiles_n, cluster_tiles, clusters, static_cast<int>(ceil_div(a.k, static_cast<int64_t>(BK))),
               a.m, a.n, a.stream, &ws, &flags};
  const typename S::Params sp = S::plan(g);
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CLUSTER), THREADS, SMEM_BYTES, CLUSTER, a.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, maps, mc, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                c_vec, tma_cols, sp));
  detail::check_launch(name);
#if defined(RUNGS_HANG_DEBUG)
  detail::hang_report<<<1, 1, 0, a.stream>>>();
#endif
}

// A TmaStages rung's launch: the maps of its operands, then the grid.
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
void launch(const typename Problem<T>::Args& a, const char* name) {
  using M = typename P::Mainloop;
  launch<T, A_MN, B_MN, C_T, P>(a, M::template make_maps<M, T, A_MN, B_MN>(a), name);
}

// A rung's entry: operands TMA cannot read in place copied aligned (gemm/pack.hpp), then the
// kernel for the operands' layout. tf32 nn runs as C^T = B^T A^T (C_T).
template <class P, typename T>
void run(const ArgsT<T>& user, const char* name) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b, true);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    if constexpr (std::is_same_v<T, float>) {  // operands() left no tn: A or B (or both) K-major
      if constexpr (decltype(tb)::value) {  // B K-major: A K-major in shared memory, or MN-major through registers
        launch<T, decltype(ta)::value, false, false, P>(a, name);
      } else if constexpr (!decltype(ta)::value) {  // nn: C^T = B^T A^T, B (n-contiguous) the A_MN operand
        ArgsT<T> s = a;
        s.m = a.n, s.n = a.m, s.A = a.B, s.lda = a.ldb, s.B = a.A, s.ldb = a.lda, s.ta = Trans::T, s.tb = Trans::T;
        launch<T, true, false, true, P>(s, name);
      } else {  // tn: operands() copies A k-contiguous, so this is a bug, not a shape to skip
        throw Error(std::string("rungs: ") + name + ": tf32 tn reached the kernel uncopied");
      }
    } else {
      launch<T, decltype(ta)::value, !decltype(tb)::value, false, P>(a, name);
    }
  });
}

// An fp8 rung's entry (rung 28): the operands made K-major and TMA-addressable (an aligned,
// transposed copy where they are not: gemm/pack.hpp), then the kernel for the operands' fp8 types
// and C's type. The caller has refused the scalings its epilogue does not apply.
template <class P>
void run_fp8(const ArgsF8& user, const char* name) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsF8 a = pack::operands_fp8(user, keep_a, keep_b);
  auto go = [&](auto a8, auto b8, auto c) {
    using TA8 = decltype(a8);
    using TB8 = decltype(b8);
    using TC = decltype(c);
    const ArgsFp8<TA8, TB8, TC> k{a.ta, a.tb, a.m, a.n, a.k, a.alpha,
                                  static_cast<const TA8*>(a.A), a.lda,
                                  static_cast<const TB8*>(a.B), a.ldb,
                                  a.beta, static_cast<TC*>(a.C), a.ldc, a.stream, a.scales};
    launch<Fp8<TA8, TB8, TC>, false, false, false, P>(k, name);
  };
  with_fp8_types(a, go);
}

}  // namespace rungs::sgemm::ws
