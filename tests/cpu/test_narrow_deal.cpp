// Rung 23's deal of cluster tiles (detail/narrow_deal.hpp), replayed on the CPU: every full and
// every narrow tile is run by exactly one cluster, the full ones round-robin as in rungs 15-20,
// each cluster's full tiles before its narrow ones, and no cluster's load (a full tile 1, a narrow
// one 1/2) above what the deal promises. With a short last row (odd tile rows), the blocks' tiles
// cover the grid exactly once: pairs of tile rows, the last row's pairs side by side, narrow tiles.
#include "detail/narrow_deal.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using rungs::detail::NarrowDeal;

void check_deal(int rows, int tiles_n, bool narrow_last, int g, bool odd_rows = false) {
  SCOPED_TRACE(testing::Message() << rows << " cluster rows x " << tiles_n << " tile columns, narrow last "
                                  << narrow_last << ", " << g << " clusters, odd tile rows " << odd_rows);
  const NarrowDeal d(rows, tiles_n, narrow_last, g, odd_rows);
  const int full_cols = narrow_last ? tiles_n - 1 : tiles_n;
  const bool paired = odd_rows && NarrowDeal::short_pays(rows, full_cols, g);  // the short row side by side
  const int pair_rows = paired ? rows - 1 : rows, short_pairs = paired ? (full_cols + 1) / 2 : 0;
  const int full = pair_rows * full_cols + short_pairs, narrow = narrow_last ? rows : 0;
  ASSERT_EQ(d.full, full);
  ASSERT_EQ(d.narrow, narrow);
  ASSERT_EQ(d.pair_full, pair_rows * full_cols);
  // Every tile of the grid, run by exactly one block (rank 0 or 1 of a cluster). The kernel walks the
  // pairs' indices with the banded swizzle (a bijection onto pair_rows x full_cols); row-major here.
  const int tiles_m = odd_rows ? 2 * rows - 1 : 2 * rows;
  std::vector<int> tile_seen(static_cast<size_t>(tiles_m) * tiles_n, 0);
  auto run_tile = [&](int row, int col) {
    if (row >= tiles_m) return;  // a block past m (the second of a last cluster row)
    ASSERT_GE(col, 0);
    ASSERT_LT(col, tiles_n);
    ++tile_seen[static_cast<size_t>(row) * tiles_n + col];
  };
  std::vector<int> full_seen(full, 0), narrow_seen(narrow, 0);
  double max_load = 0;
  int most_full = 0;
  for (int c = 0; c < g; ++c) {
    const NarrowDeal::Share share = d.share(c);
    const int n = share.count;
    bool in_narrow = false;
    int nf = 0, nn = 0;
    for (int p = 0; p < n; ++p) {
      int index = -1;
      const bool is_narrow = share.at(p, index);
      if (is_narrow) {
        ASSERT_GE(index, 0);
        ASSERT_LT(index, narrow);
        ++narrow_seen[index], ++nn;
        in_narrow = true;
        for (int rank = 0; rank < 2; ++rank) run_tile(2 * index + rank, tiles_n - 1);
      } else {
        ASSERT_FALSE(in_narrow) << "a full tile after a narrow one";
        ASSERT_EQ(index, c + p * g) << "full tiles dealt round-robin";
        ASSERT_LT(index, full);
        ++full_seen[index], ++nf;
        for (int rank = 0; rank < 2; ++rank) {
          int col = -1;
          if (d.short_pair(index, rank, col)) {
            ASSERT_TRUE(paired);
            if (col < full_cols) run_tile(tiles_m - 1, col);
          } else {
            run_tile(2 * (index / full_cols) + rank, index % full_cols);
          }
        }
      }
    }
    most_full = std::max(most_full, nf);
    max_load = std::max(max_load, nf + 0.5 * nn);
  }
  for (int i = 0; i < full; ++i) ASSERT_EQ(full_seen[i], 1) << "full tile " << i;
  for (int i = 0; i < narrow; ++i) ASSERT_EQ(narrow_seen[i], 1) << "narrow tile " << i;
  for (size_t i = 0; i < tile_seen.size(); ++i)
    ASSERT_EQ(tile_seen[i], 1) << "tile row " << i / tiles_n << ", column " << i % tiles_n;
  // The round-robin deal of rungs 15-20 gives some cluster ceil(F / G) full tiles plus a narrow
  // one wherever the narrow tiles outnumber the clusters that run one full tile fewer; this deal
  // adds to the longest cluster only what the narrow tiles cannot fit into those gaps.
  const int gaps = full % g == 0 ? 0 : g - full % g;
  if (narrow <= 2 * gaps || full % g == 0) {
    const double bound = most_full + (full % g == 0 ? 0.5 * ((narrow + g - 1) / g) : 0.0);
    EXPECT_LE(max_load, std::max(bound, 1.0 * most_full)) << "narrow tiles fit the clusters with fewer full tiles";
  }
}

TEST(NarrowDeal, EveryTileOnceFullTilesRoundRobin) {
  for (int g : {1, 2, 7, 66})
    for (int rows : {1, 2, 9, 13, 16, 17, 64, 65, 66, 67, 131, 200})
      for (int tiles_n : {1, 2, 3, 9, 17, 33})
        for (bool narrow_last : {false, true})
          for (bool odd_rows : {false, true}) check_deal(rows, tiles_n, narrow_last, g, odd_rows);
}

TEST(NarrowDeal, ShortLastRowTakesARoundLess) {
  // 4104 x 4096 (or tf32 nn 4096 x 4104, whose swapped product has 4104 rows) on 66 clusters: 33 tile
  // rows, 16 columns. Rungs 15-20: 17 x 16 = 272 cluster tiles, 5 rounds; here 16 x 16 + 8 = 264, 4.
  const NarrowDeal d(17, 16, false, 66, true);
  EXPECT_EQ(d.pair_full, 256);
  EXPECT_EQ(d.full, 264);
  for (int c = 0; c < 66; ++c) EXPECT_EQ(d.share(c).count, 4) << c;
  int col = -1;
  EXPECT_FALSE(d.short_pair(255, 1, col));
  EXPECT_TRUE(d.short_pair(263, 1, col));
  EXPECT_EQ(col, 15);
  EXPECT_TRUE(NarrowDeal::short_pays(17, 16, 66));   // 272 -> 264 cluster tiles: 5 rounds -> 4
  EXPECT_FALSE(NarrowDeal::short_pays(9, 8, 66));    // 2056 x 2048: 72 -> 68, 2 rounds either way
  EXPECT_FALSE(NarrowDeal::short_pays(16, 16, 66));  // (an even count never gets here; nor would it pay)
  EXPECT_TRUE(NarrowDeal::short_pays(1, 16, 8));     // 16 -> 8 on 8 clusters: 2 rounds -> 1
}

TEST(NarrowDeal, ShapesOfTheRung23Header) {
  // 4096 x 4104 on 66 clusters: 16 cluster rows, 17 tile columns (the last 8 wide).
  const NarrowDeal d(16, 17, true, 66);
  EXPECT_EQ(d.full, 256);
  EXPECT_EQ(d.rounds, 3);
  EXPECT_EQ(d.left, 58);
  for (int c = 0; c < 58; ++c) EXPECT_EQ(d.share(c).count, 4) << c;  // 4 full
  for (int c = 58; c < 66; ++c) {                                // 3 full and 2 narrow
    const NarrowDeal::Share s = d.share(c);
    EXPECT_EQ(s.count, 5) << c;
    int index;
    EXPECT_FALSE(s.at(2, index));
    EXPECT_TRUE(s.at(3, index));
    EXPECT_TRUE(s.at(4, index));
  }
  // Without a narrow column, the round-robin deal of rungs 15-20.
  const NarrowDeal r(16, 16, false, 66);
  for (int c = 0; c < 66; ++c) EXPECT_EQ(r.share(c).count, (256 - c + 65) / 66) << c;
}

}  // namespace
