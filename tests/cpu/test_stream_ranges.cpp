// Rung 27's ranges (detail/stream_ranges.hpp), replayed on the CPU: every unit of every tile lies in
// exactly one segment of exactly one range, segments are in k order within a tile, only a range's
// first and last segment cut a tile, and owner() finds the range of each unit.
#include "detail/stream_ranges.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using rungs::detail::StreamRanges;

void check(int64_t tiles, int64_t KT, int64_t P) {
  const StreamRanges r{tiles * KT, P, KT};
  SCOPED_TRACE(::testing::Message() << "tiles " << tiles << " KT " << KT << " P " << P);
  std::vector<int> seen(static_cast<size_t>(tiles * KT), 0);
  bool cut = false;
  for (int64_t b = 0; b < P; ++b) {
    const int count = r.segments(b);
    int64_t next = r.start(b);  // the next unit the range must cover
    for (int p = 0; p < count; ++p) {
      int64_t tile = 0;
      int kb = 0, ke = 0;
      r.segment(b, p, tile, kb, ke);
      ASSERT_GE(tile, 0);
      ASSERT_LT(tile, tiles);
      ASSERT_LE(0, kb);
      ASSERT_LT(kb, ke);
      ASSERT_LE(ke, KT);
      EXPECT_EQ(tile * KT + kb, next) << "range " << b << " segment " << p;
      next = tile * KT + ke;
      const bool whole = kb == 0 && ke == KT;
      if (!whole) {
        cut = true;
        EXPECT_TRUE(p == 0 || p == count - 1) << "a middle segment cuts tile " << tile;
      }
      for (int k = kb; k < ke; ++k) {
        ++seen[static_cast<size_t>(tile * KT + k)];
        EXPECT_EQ(r.owner(tile * KT + k), b);
      }
    }
    EXPECT_EQ(next, r.start(b + 1)) << "range " << b;
  }
  for (size_t u = 0; u < seen.size(); ++u) ASSERT_EQ(seen[u], 1) << "unit " << u;
  EXPECT_EQ(r.cuts(), cut);
}

TEST(StreamRanges, EveryUnitOnceInKOrder) {
  check(56, 128, 132);   // 7168 x 8192 at m <= 128: 56 tiles of 128 k tiles on 132 SMs
  check(224, 128, 132);  // 28672 x 8192
  check(64, 448, 132);   // 8192 x 28672
  check(132, 128, 132);  // a tile a range: nothing cut
  check(1, 4, 1);
  check(3, 5, 2);
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const int64_t tiles = 1 + rng() % 300, KT = 1 + rng() % 200;
    const int64_t P = 1 + rng() % std::min<int64_t>(tiles * KT, 200);
    check(tiles, KT, P);
  }
}

}  // namespace
