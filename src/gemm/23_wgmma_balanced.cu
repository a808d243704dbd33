// Rung 23, wgmma_balanced: rung 20 (ragged tiles multiplied only as wide as they are, C that TMA
// cannot store written by the producer's idle warps; sm_90a) with its ragged edges balanced over the
// clusters: a narrow last tile column, and a short last tile row; f16, bf16 and tf32 as rung 20.
// Adds over 20 wgmma_ragged, where the last tile column is at most 64 columns wide (n % 256 in
// 1 .. 64):
//  * the deal (detail/narrow_deal.hpp): rungs 15-20 deal cluster tiles round-robin, so the narrow
//    tiles land among the full ones and the longest cluster runs its full tiles plus a narrow one.
//    Here the narrow tiles go to the clusters that run one full tile fewer, two each, and every
//    cluster runs its narrow tiles last. At 4096 x 4104 (256 full and 16 narrow cluster tiles on the
//    H100's 66 clusters): 58 clusters run 4 full tiles, 8 run 3 full and 2 narrow.
//  * two k tiles per stage for a narrow tile (a k-contiguous B in boxes of 64 rows of n, map_b64;
//    tf32's register path too): its stage holds A, A', B and B' (16 + 16 + 8 + 8 KB of the 48), so
//    twice the bytes are in flight. A narrow tile multiplies a quarter of a full one's columns but
//    loads all of A: rung 20 measured it at ~0.66 of a full tile's time (0.029 ms at 4096 x 4104,
//    where a quarter of a round, 0.011, was predicted), the time of four stages' loads in flight,
//    not of its MMAs.
// Prediction (bf16, H100; rung 20 measured 0.204 / 0.275 / 0.0416 ms): the narrow tiles at ~0.35
// of a full one, two of them beside 3 full tiles, so the longest cluster runs what 4096^3 runs:
// 4096 x 4104 x 4096 ~0.18 ms (1.03x its 4096^3), 4095 x 4097 x 4093 ~0.25 (the copies of A and B
// stay); 2048 x 2056 x 2048 (64 full cluster tiles, 8 narrow) ~0.037. Shapes without a narrow last
// column: rung 20's deal and speed (the same kernel).
// Measured (H100, a184a29: the deal, and paired stages for an n-contiguous B only; rung 20 in the
// same run): 4096 x 4104 x 4096 bf16 0.1792 ms = 1.02x its 4096^3 (rung 20 0.2013, cuBLAS 0.1800),
// f16 0.1863 (0.2080); 4095 x 4097 x 4093 bf16 0.2540 = 1.45x (0.2732), f16 0.2586 (0.2792);
// 2048 x 2056 x 2048 0.0410 (0.0413: no gain, 64 full cluster tiles fill 64 of 66 clusters, so half
// the narrow tiles still land beside a full one); tf32 and k-major B (the deal only) level to 3 %
// better. Correct, sanitizers clean.
// A k-contiguous B pairs its k tiles in 64-row boxes (ddde3ac; 16-bit nt / tt, tf32 nt / tn).
// Predicted: bf16 4096 x 4100 x 4096 nt from 0.207 ms (the deal alone) to ~0.19, as pairing took
// nn's 4104 from ~0.195 to 0.179. Measured at ddde3ac: bf16 4096 x 4100 x 4096 nt 0.1946 ms (rung 20
// 0.2168), tt 0.1946 (0.2175): as predicted (C's rows of 4100 are not 16-byte aligned there, so the
// storer path stays: 1.10x its 4096^3); tf32 nt 4096 x 4104 x 4096 0.3435 (0.3868) = 1.01x its
// 4096^3, 1.07x cuBLAS.
// A short last row: a cluster is two blocks along m, so with an odd number of 128-row tile rows the
// last cluster row pairs a tile with one wholly past m and costs a full cluster tile's time for
// half its work. At 4104 rows (bf16 4104 x 4096 x 4096, and tf32 nn 4096 x 4104 x 4096, whose
// swapped product C^T = B^T A^T has 4104 rows): 33 tile rows, 17 x 16 = 272 cluster tiles on 66
// clusters, 5 rounds where 4096's 256 take 4 (tf32 nn 4104 measured 1.21x its 4096^3 unpaired).
// The deal pairs that row's tiles side by side (block 0 column 2 s, block 1 column 2 s + 1, each
// loading its own B: no multicast), 16 x 16 + 8 = 264 cluster tiles, 4 rounds, wherever that takes
// a round off the longest cluster (NarrowDeal::short_pays: paired at 2056 x 2048 x 2048 bf16,
// 2 rounds either way, it ran 0.0499 ms against rung 20's 0.0431; 17a74d8). Predicted: tf32 nn
// 4096 x 4104 x 4096 from 0.406 ms to ~0.345 (its 4096^3 x 4 / 3.88), bf16 4104 x 4096 x 4096 from
// ~0.21 (rung 20) to ~0.18. Measured (99765f0): tf32 nn 0.351 ms, bf16 0.180 (rung 20 0.204). The
// storer warps' walk spills at 48 registers (16-bit, B n-contiguous): 56 for the producer
// warpgroup, 216 for the consumers (no spills).
// Register path (e67241e): tf32 with A read through registers (nn swapped, tt) pairs its narrow
// tiles' stages too, each k tile of a pair a step of the same loop (a second loop made ptxas
// serialize the wgmmas, C7512). Predicted tf32 nn 4104 x 4096 x 4096 from 0.385 ms unpaired (1.12x
// its 4096^3) to ~0.35. Measured (H100, 13bc237, rung 20 and cuBLAS in the same run): 0.3685 ms =
// 1.07x its 4096^3 (rung 20 0.3951, cuBLAS 0.4602), tt 4096 x 4104 0.3715 (0.3967, 0.4099); at
// e67241e 0.3639 / 0.3667. Partly as predicted: the narrow register-path tile still costs ~0.57 of a
// full one. A miss: tf32 nn 2056 x 2048 x 2048, 0.0888 ms against rung 20's 0.0776 (the deal gives
// two clusters three narrow tiles each; at ~0.57 round-robin is better); `auto` takes rung 23 for
// tf32 only from 2^35 multiply-adds, so cuBLAS runs there.
// Bounded by: on unaligned rows, the copies of A and B and C's storer path (~0.075 ms at 4095 x 4097
// x 4093); where one round of tiles does not fill the clusters, the narrow tiles beside full ones.
#include "detail/narrow_deal.hpp"
#include "gemm/20_wgmma_ragged.cuh"

namespace rungs::sgemm::ws {

// Mainloop: Ragged, with a narrow tile's (64 columns, not solo) stages holding two k tiles each (A,
// A', B, B', 16 + 16 + 8 + 8 KB; tf32's register path too), so twice the bytes are in flight for a
// tile whose time is the latency of its loads. A k-contiguous B comes in boxes of 64 rows of n for
// them (map_b64). The frame's load_piece and multiply_piece read `pairs` and two().
struct Paired : Ragged {
  static constexpr bool pairs = true;
  __device__ __forceinline__ static bool two(int nb, bool solo) { return nb == 64 && !solo; }
};

// Schedule: a narrow last tile column (<= 64 columns) and a short last tile row (the tile rows odd
// in number: its tiles paired side by side, solo) dealt by detail::NarrowDeal.
struct Balanced : Cooperative {
  static constexpr bool whole_tiles = true;
  // 16-bit: the storer warps' walk (NarrowDeal::Share, with the short last row's walk) spills at
  // 40 and at 48 registers; 56 for the producer warpgroup leaves the consumers 216 (the block's
  // 384 x 168 registers), enough for the shared-memory form (tf32 through registers needs its
  // 232; its storers fit in 40).
  static constexpr bool wide_producer = true;
  static constexpr int rs_in_flight = 1;
  struct Params {
    int kt = 0;
    detail::NarrowDeal deal;
  };
  // The last tile column is narrow where its edge width is 64 (n % BN in 1 .. 64); the last cluster
  // row is short where the tile rows are odd in number (the deal pairs it where that pays).
  static Params plan(const Grid& g) {
    const bool narrow_last = g.n % BN != 0 && g.n % BN <= 64;
    return Params{g.kt, detail::NarrowDeal(static_cast<int>(ceil_div(g.tiles_m, CLUSTER)), static_cast<int>(g.tiles_n),
                                           narrow_last, g.clusters, g.tiles_m % CLUSTER != 0)};
  }
  template <int TBN>
  struct Walk {
    static_assert(TBN == BN, "the deal of 256-column tiles");
    Params sp;
    detail::NarrowDeal::Share share;
    int count, tiles_m, tiles_n;
    uint32_t rank;
    __device__ __forceinline__ Walk(const Params& p, int tiles_m_, int tiles_n_, uint32_t rank_)
        : sp(p), share(p.deal.share(detail::cluster_walk(tiles_m_, tiles_n_, CLUSTER).first)), tiles_m(tiles_m_),
          tiles_n(tiles_n_), rank(rank_) {
      count = share.count;
    }
    __device__ __forceinline__ void piece(int, int& t, int& kb, int& ke) const { t = 0, kb = 0, ke = sp.kt; }
    // Piece p of this cluster: this block's tile at (m0, n0). solo: a short pair of the last tile row,
    // the two blocks side by side, each loading its own B.
    __device__ __forceinline__ void tile(int p, int, int& m0, int& n0, bool& solo) const {
      const detail::NarrowDeal& deal = sp.deal;
      int cm = 0, tn = 0, index, col = 0;
      solo = false;
      if (share.at(p, index)) cm = index, tn = tiles_n - 1;
      else if (deal.short_pair(index, static_cast<int>(rank), col)) solo = true;
      else cluster_tile(index, deal.pair_rows, deal.full_cols, cm, tn);
      if (solo) {  // tile column col of the last row; none past the full columns (then rows past m)
        const bool has = col < deal.full_cols;
        m0 = (has ? tiles_m - 1 : tiles_m) * BM, n0 = has ? col * BN : 0;
        return;
      }
      tile_origin(cm, tn, rank, m0, n0);
    }
    __device__ __forceinline__ void locate(int p, int& m0, int& n0, bool& solo, int& kb, int& ke) const {
      kb = 0, ke = sp.kt;
      tile(p, 0, m0, n0, solo);
    }
    template <class Store>
    __device__ __forceinline__ void finish(float (&)[128], int, int, int, Store&& store) const {
      store();
    }
  };
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_balanced {

using Parts = ws::Parts<ws::Balanced, ws::Paired, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_balanced"); }

}  // namespace rungs::sgemm::wgmma_balanced
