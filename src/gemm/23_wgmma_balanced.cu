// Rung 23, wgmma_balanced: rung 20 with its ragged edges balanced over the clusters, a narrow last
// tile column (n % 256 in 1 .. 64) and a short last tile row (sm_90a); f16, bf16 and tf32 as rung 20.
// Adds over 20 wgmma_ragged: Schedule Balanced and Mainloop Paired (below), by detail/narrow_deal.hpp.
//  - the deal: round-robin puts narrow tiles among full ones, so the longest cluster runs its full
//    tiles plus a narrow one. Here the narrow tiles go two each, last, to the clusters that run one
//    full tile fewer (4096 x 4104 on 66 clusters: 58 run 4 full tiles, 8 run 3 full and 2 narrow).
//  - two k tiles per stage for a narrow tile (A, A', B, B': 16 + 16 + 8 + 8 KB; a k-contiguous B in
//    boxes of 64 rows of n, tf32's register path too, each pair's k tiles steps of one loop): a narrow
//    tile loads all of A for a quarter of the columns, so its time is its loads' latency, and twice
//    the bytes in flight halve it.
//  - a short last tile row (odd tile rows: a cluster pairs a tile with one wholly past m) has its
//    tiles paired side by side, each block loading its own B, where that takes a round off the
//    longest cluster (NarrowDeal::short_pays; elsewhere it costs: 2056 x 2048 x 2048 bf16, two rounds
//    either way, ran 0.0499 ms against rung 20's 0.0431).
// Bounded by: on unaligned rows, the copies of A and B and C's storer path (~0.075 ms at 4095 x 4097
// x 4093); a narrow tile still costs ~0.35 of a full one (~0.57 on tf32's register path), and where
// one round does not fill the clusters (2048 x 2056 x 2048) half the narrow tiles sit beside full ones.
// Prediction: a narrow tile ~0.35 of a full one, bf16 4096 x 4104 x 4096 ~0.18 ms (1.03x its 4096^3);
// measured: 0.1792 ms, 1.02x (rung 20 0.2013, cuBLAS 0.1800; H100): held.
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

namespace rungs::sgemm::wgmma_balanced {

using Parts = ws::Parts<ws::Balanced, ws::Paired, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_balanced"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_balanced
