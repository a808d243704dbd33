// Rung 22's part, the narrow tiles' deal (used by rungs 22 and 23; what it adds and why:
// 22_wgmma_deal.cu): Balanced, a schedule that deals a narrow last tile column and a short last tile
// row by detail::NarrowDeal.
#pragma once

#include "detail/narrow_deal.hpp"
#include "gemm/20_wgmma_ragged.cuh"

namespace rungs::sgemm::ws {

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
    static constexpr int CLUSTER = Cooperative::CLUSTER;  // the mainloop's loads read it
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
