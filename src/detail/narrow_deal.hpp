// Rung 23's deal of a persistent grid's cluster tiles when the last tile column is narrow (at most
// 64 columns: n % 256 in 1 .. 64). Host and device (the CPU tests replay it).
//
// Rungs 15-20 deal cluster tiles round-robin: with F full tiles, N narrow ones and G clusters,
// cluster c runs tiles c, c + G, ..., and the narrow tiles, spread through the order, land on
// clusters that already run the most full tiles. The longest cluster then runs ceil(F / G) full
// tiles plus a narrow one. Here the full tiles are dealt round-robin as before (F = rounds * G +
// left: clusters 0 .. left - 1 run one more), and the narrow tiles go first to the clusters that
// run one fewer (left .. G - 1), two each (a narrow tile costs under half a full one: rung 23 loads
// two k tiles per stage for it), then round-robin from cluster `left` on. Each cluster runs its full
// tiles first, then its narrow ones.
#pragma once

#if defined(__CUDACC__)
#define RUNGS_HD __host__ __device__ __forceinline__
#else
#define RUNGS_HD inline
#endif

namespace rungs::detail {

struct NarrowDeal {
  int clusters = 1;            // G
  int full = 0, narrow = 0;    // cluster tiles of each kind
  int full_cols = 0;           // tile columns of the full tiles (tiles_n - 1 where the last is narrow)
  int rounds = 0, left = 0;    // full = rounds * G + left
  int cap = 0;                 // narrow tiles dealt two each to clusters left .. G - 1 first

  NarrowDeal() = default;
  // rows: cluster rows; tiles_n: tile columns; narrow_last: the last column is narrow; g: clusters.
  RUNGS_HD NarrowDeal(int rows, int tiles_n, bool narrow_last, int g) {
    clusters = g > 0 ? g : 1;
    full_cols = narrow_last ? tiles_n - 1 : tiles_n;
    full = rows * full_cols, narrow = narrow_last ? rows : 0;
    rounds = full / clusters, left = full % clusters;
    cap = 2 * (clusters - left);
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
