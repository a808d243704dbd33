// Rung 23's deal of cluster tiles (detail/narrow_deal.hpp), replayed on the CPU: every full and
// every narrow tile is run by exactly one cluster, the full ones round-robin as in rungs 15-20,
// each cluster's full tiles before its narrow ones, and no cluster's load (a full tile 1, a narrow
// one 1/2) above what the deal promises.
#include "detail/narrow_deal.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using rungs::detail::NarrowDeal;

void check_deal(int rows, int tiles_n, bool narrow_last, int g) {
  SCOPED_TRACE(testing::Message() << rows << " cluster rows x " << tiles_n << " tile columns, narrow last "
                                  << narrow_last << ", " << g << " clusters");
  const NarrowDeal d(rows, tiles_n, narrow_last, g);
  const int full = rows * (narrow_last ? tiles_n - 1 : tiles_n), narrow = narrow_last ? rows : 0;
  ASSERT_EQ(d.full, full);
  ASSERT_EQ(d.narrow, narrow);
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
      } else {
        ASSERT_FALSE(in_narrow) << "a full tile after a narrow one";
        ASSERT_EQ(index, c + p * g) << "full tiles dealt round-robin";
        ASSERT_LT(index, full);
        ++full_seen[index], ++nf;
      }
    }
    most_full = std::max(most_full, nf);
    max_load = std::max(max_load, nf + 0.5 * nn);
  }
  for (int i = 0; i < full; ++i) ASSERT_EQ(full_seen[i], 1) << "full tile " << i;
  for (int i = 0; i < narrow; ++i) ASSERT_EQ(narrow_seen[i], 1) << "narrow tile " << i;
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
        for (bool narrow_last : {false, true}) check_deal(rows, tiles_n, narrow_last, g);
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
