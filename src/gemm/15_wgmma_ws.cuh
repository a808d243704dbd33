// Rung 15's parts (wgmma_ws, 15_wgmma_ws.cu), which later rungs of the skeleton reuse: the banded
// round-robin schedule, the direct-store epilogue, the whole-tile mainloop and the accumulation in
// the tensor core.
#pragma once

#include "detail/sm90/store.cuh"
#include "gemm/wgmma_ws.cuh"
#include "gemm/ws/cooperative.cuh"
#include "gemm/ws/k_loop.cuh"
#include "gemm/ws/tma_stages.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// The tiles of cluster-tile t: the cluster's tile rows (CL * cm .. CL * cm + CL - 1) and column tn.
__device__ __forceinline__ void cluster_tile(int t, int cluster_rows, int tiles_n, int& cm, int& tn) {
  detail::swizzle_tile(t, cluster_rows, tiles_n, BAND, cm, tn);
}
// This block's tile of cluster tile (cm, tn): tile row CL cm + rank of a cluster of CL blocks
// along m, column tn (tiles TBN columns wide: the mainloop's).
template <int TBN = BN, int CL = CLUSTER>
__device__ __forceinline__ void tile_origin(int cm, int tn, uint32_t rank, int& m0, int& n0) {
  m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * TBN;
}

// The banded order (8 cluster rows per band, so the tiles in flight share A and B panels in L2):
// this block's tile of cluster tile t, tiles TBN columns wide, clusters of CL blocks along m. A
// schedule's walk over whole or split tiles builds on it.
template <int TBN, int CL = CLUSTER>
struct BandedTiles {
  static constexpr int CLUSTER = CL;  // blocks along m sharing B (the mainloop's loads read it)
  detail::ClusterWalk walk;
  int tiles_n;
  uint32_t rank;
  __device__ __forceinline__ BandedTiles(int tiles_m, int tiles_n_, uint32_t rank_)
      : walk(detail::cluster_walk(tiles_m, tiles_n_, CL)), tiles_n(tiles_n_), rank(rank_) {}
  // This block's tile of piece p (of cluster tile t); solo: see Balanced.
  __device__ __forceinline__ void tile(int, int t, int& m0, int& n0, bool& solo) const {
    int cm, tn;
    cluster_tile(t, walk.rows, tiles_n, cm, tn);
    tile_origin<TBN, CL>(cm, tn, rank, m0, n0);
    solo = false;
  }
};

// Schedule: cluster tiles dealt round-robin, cluster c running tiles c, c + G, c + 2G, ... of the
// banded order, each tile whole (k tiles 0 .. kt - 1), both consumers on every tile.
struct RoundRobin : Cooperative {
  static constexpr bool whole_tiles = true;   // every piece is a whole tile
  static constexpr bool wide_producer = false;  // the producer warpgroup needs more than 40 registers
  static constexpr int rs_in_flight = 1;  // tf32 register path: wgmma groups left in flight per k tile
  struct Params {
    int kt = 0;
  };
  static Params plan(const Grid& g) { return Params{g.kt}; }
  // The walk over tiles TBN columns wide (the mainloop's width), clusters of CL blocks.
  template <int TBN, int CL = CLUSTER>
  struct WalkOf : BandedTiles<TBN, CL> {
    using BandedTiles<TBN, CL>::walk;
    Params sp;
    int count;
    __device__ __forceinline__ WalkOf(const Params& p, int tiles_m, int tiles_n_, uint32_t rank_)
        : BandedTiles<TBN, CL>(tiles_m, tiles_n_, rank_), sp(p) {
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
  template <int TBN>
  using Walk = WalkOf<TBN>;
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
      store_rows<T, 2 * R>(d, a, m0 + cw * 64, n0, c_vec);
  }
  // 64 rows of C from row0, N columns from n0 (d: their 64 x N accumulator).
  template <typename T, int N, class Args>
  static __device__ __forceinline__ void store_rows(const float (&d)[N / 2], const Args& a, int row0, int n0,
                                                    bool c_vec) {
    detail::store_acc_64xn<T, N>(d, a.C, a.ldc, row0, n0, static_cast<int>(a.m), static_cast<int>(a.n), a.alpha,
                                 a.beta, c_vec);
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
    // A schedule whose consumer owns whole tiles (PingPong) stores them 64 rows at a time.
    template <int N, class Ctx>
    __device__ __forceinline__ void store_rows(const Ctx& x, const float (&d)[N / 2], int row0, int n0) {
      static_assert(!C_T, "C^T: the cooperative store");
      DirectStore::store_rows<T, N>(d, x.a, row0, n0, x.c_vec);
    }
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx&) {}  // after the last tile
  };
};

// Mainloop: every tile multiplies all TN columns of B, one k tile a stage (RING stages in flight).
template <int TN, int RING_, int FILL = 256, int TM = BM>
struct WholeTilesOf : TmaStagesOf<TN, RING_, FILL, TM> {
  static constexpr bool ragged = false;  // tiles narrower than TN (a narrower B load and wgmma)
  static constexpr bool pairs = false;   // stages of two k tiles for a narrow tile
  __device__ __forceinline__ static int width(int) { return TN; }
  __device__ __forceinline__ static bool two(int, bool) { return false; }
  // The consumer's k loop for piece p: mainloop(width, two) at the width of the tile.
  template <class Walk, class Mainloop, class Paired>
  __device__ __forceinline__ static void multiply(const Walk&, int, int, int64_t, int64_t, int, Paired&&,
                                                  Mainloop&& mainloop) {
    mainloop(std::integral_constant<int, TN>{}, false);
  }
};
using WholeTiles = WholeTilesOf<BN, STAGES>;  // 128 x 256 tiles, 4 stages of 48 KB

// Accumulator (rungs 15, 17-21, 23): the tensor core's accumulator over the tile's whole k, the
// mainloop's k loop as it is. ScaledInTensorCore (28_wgmma_fp8.cuh) adds fp8's scales before the
// store; Promote (29_wgmma_fp8_promote.cuh) and OrderedPromote (30_wgmma_fp8_overlap.cu) run their
// own k loop over the mainloop's stages, adding partial sums into fp32 registers.
struct InTensorCore {
  template <class M, class S, typename T, bool A_MN, bool B_MN, int R, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[R], const Walk& walk, int p, int t, int kb, int ke,
                                                  const typename Problem<T>::Args& a, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi& epi, const Ctx& ctx,
                                                  Release&& release) {
    multiply_piece<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, smem, full, cw, it, epi, ctx, release, a.m, a.n);
  }
  // Before the tile's store: nothing (fp8 sums need their scales: rung 28's ScaledInTensorCore).
  template <typename T, int R>
  static __device__ __forceinline__ void scale(float (&)[R], const typename Problem<T>::Args&, int, int) {
    static_assert(!Problem<T>::fp8, "fp8 sums need their scales (ScaledInTensorCore, or a promotion)");
  }
  static __device__ __forceinline__ void after_tiles(int, int) {}  // after the consumer's last tile
};

}  // namespace rungs::sgemm::ws
