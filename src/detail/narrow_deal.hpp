// Rung 23's deal of a persistent grid's cluster tiles when the last tile column is narrow (at most
// 64 columns: n % 256 in 1 .. 64) or the last tile row short. Host and device (the CPU tests replay it).
//
// Rungs 15-20 deal cluster tiles round-robin: with F full tiles, N narrow ones and G clusters,
// cluster c runs tiles c, c + G, ..., and the narrow tiles, spread through the order, land on
// clusters that already run the most full tiles. The longest cluster then runs ceil(F / G) full
// tiles plus a narrow one. Here the full tiles are dealt round-robin as before (F = rounds * G +
// left: clusters 0 .. left - 1 run one more), and the narrow tiles go first to the clusters that
// run one fewer (left .. G - 1), two each (a narrow tile costs under half a full one: rung 23 loads
// two k tiles per stage for it), then round-robin from cluster `left` on. Each cluster runs its full
// tiles first, then its narrow ones.
//
// A short last row: where the tile rows are odd in number, the last cluster
// row of rungs 15-20 pairs tile row tiles_m - 1 with a row wholly past m, so its cluster tiles cost
// a full tile's time for half a full tile's work (4104 x 4096: 17 x 16 = 272 cluster tiles, 5
// rounds on 66 clusters where 256 take 4). Here that row's full tiles are paired side by side
// instead (block 0 tile column 2 s, block 1 column 2 s + 1, each loading its own B): ceil(F' / 2)
// short pairs, dealt as full tiles after the pair_rows * full_cols full pairs, where that takes a
// round off the longest cluster (short_pays). The last row's narrow tile, if any, stays with the
// narrow ones (block 1 past m).
#pragma once

#include "detail/host_device.hpp"

namespace rungs::detail {

struct NarrowDeal {
  int clusters = 1;            // G
  int full = 0, narrow = 0;    // cluster tiles of each kind
  int full_cols = 0;           // tile columns of the full tiles (tiles_n - 1 where the last is narrow)
  int rounds = 0, left = 0;    // full = rounds * G + left
  int cap = 0;                 // narrow tiles dealt two each to clusters left .. G - 1 first
  int pair_rows = 0;           // cluster rows of full pairs (rows - 1 with a short last row)
  int short_pairs = 0;         // full tiles pair_full .. full - 1: the short last row's pairs
  int pair_full = 0;           // pair_rows * full_cols (a kernel parameter: no register holds it)

  NarrowDeal() = default;
  // rows: cluster rows; tiles_n: tile columns; narrow_last: the last column is narrow; g: clusters;
  // odd_rows: the last cluster row holds one tile row (its full tiles are paired side by side where
  // short_pays).
  RUNGS_HD NarrowDeal(int rows, int tiles_n, bool narrow_last, int g, bool odd_rows = false) {
    clusters = g > 0 ? g : 1;
    full_cols = narrow_last ? tiles_n - 1 : tiles_n;
    const bool short_last = odd_rows && short_pays(rows, full_cols, clusters);
    pair_rows = short_last ? rows - 1 : rows;
    short_pairs = short_last ? (full_cols + 1) / 2 : 0;
    pair_full = pair_rows * full_cols;
    full = pair_full + short_pairs, narrow = narrow_last ? rows : 0;
    rounds = full / clusters, left = full % clusters;
    cap = 2 * (clusters - left);
  }
  // Whether to pair the short last row's tiles side by side: only where that takes a round off the
  // longest cluster (rows cluster rows, the last one short; full_cols full tile columns; g clusters).
  // A short pair loads B without multicast, 48 KB a stage per block from L2 against 32, so it pays
  // only for a whole round: 16 % slower at 2056 x 2048 x 2048 bf16 (2 rounds either way), 12 % faster
  // at 4104 x 4096 x 4096 (4 rounds instead of 5); H100, scripts/experiments/ragged/ragged.sh.
  static RUNGS_HD bool short_pays(int rows, int full_cols, int g) {
    if (rows < 1 || g < 1) return false;
    const long long before = static_cast<long long>(rows) * full_cols;
    const long long after = static_cast<long long>(rows - 1) * full_cols + (full_cols + 1) / 2;
    return (after + g - 1) / g < (before + g - 1) / g;
  }
  // Full tile `index` (< full): a pair of tile rows (false; the caller walks index over pair_rows x
  // full_cols) or, from pair_full on, a short pair (true): block `rank` runs tile column `col` of
  // the last tile row, none where col >= full_cols (full_cols odd).
  RUNGS_HD bool short_pair(int index, int rank, int& col) const {
    const int s = index - pair_full;
    if (s < 0) return false;
    col = 2 * s + rank;
    return true;
  }
  // How many of end - start, end - start - step, ... are positive.
  static RUNGS_HD int steps(int start, int end, int step) { return start < end ? (end - start + step - 1) / step : 0; }
  // Cluster c's share: its tile count and, piece by piece, which tile (no divisions per piece).
  struct Share {
    int count;      // tiles this cluster runs
    int nf, two;    // its full tiles, then its narrow tiles from the first pass (two at most)
    int c, low, g;  // c: the cluster; low = G - left (the first pass's stride)
    int a0, b0;     // its first narrow tile in the first pass (a0) and after it (b0)
    // Piece p < count: returns false and the full tile's index (c + p * G, the round-robin order of
    // rungs 15-20 over full_cols columns), or true and the narrow tile's index (its cluster row).
    RUNGS_HD bool at(int p, int& index) const {
      if (p < nf) {
        index = c + p * g;
        return false;
      }
      const int q = p - nf;
      index = q < two ? a0 + q * low : b0 + (q - two) * g;
      return true;
    }
  };
  RUNGS_HD Share share(int c) const {
    Share s;
    s.c = c, s.g = clusters, s.low = clusters - left;
    s.nf = rounds + (c < left ? 1 : 0);
    const int first = narrow < cap ? narrow : cap;
    s.a0 = c - left;
    s.two = c >= left ? steps(c - left, first, s.low) : 0;
    s.b0 = cap + (c - left + clusters) % clusters;
    s.count = s.nf + s.two + (narrow > cap ? steps(s.b0, narrow, clusters) : 0);
    return s;
  }
};

}  // namespace rungs::detail
