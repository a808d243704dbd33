// The row residue classes rung 24 reads an unaligned k-contiguous A through (detail/residue.hpp):
// for every stride, element size, base offset and row count here, each class's map is one TMA can
// take (16-byte aligned base and row stride, a stride that holds the shifted row) and addresses
// exactly the rows of A it claims, and a tile's shared-memory rows map onto its 128 rows one to one.
#include "detail/residue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rungs::detail {
namespace {

TEST(Residue, ClassesAddressEveryRowOnce) {
  for (int elem : {2, 4})
    for (int64_t cols : {1, 7, 8, 9, 33, 100, 4093})
      for (int64_t extra = 0; extra < 20; ++extra) {
        const int64_t ld = cols + extra;
        const int p = residue_classes(ld, cols, elem);
        ASSERT_GE(p, 1);
        ASSERT_EQ(p & (p - 1), 0) << "a power of two";
        ASSERT_EQ(p * ld * elem % 16, 0) << "ld " << ld << " elem " << elem;
        ASSERT_GE(p * ld, cols + 16 / elem - 1) << "the class stride holds a shifted row";
        if (p > 1) {  // the fewest classes: half as many would break one of the two
          const int h = p / 2;
          EXPECT_TRUE(h * ld * elem % 16 != 0 || h * ld < cols + 16 / elem) << "ld " << ld << " elem " << elem;
        }
        for (uintptr_t off = 0; off < 16; off += elem) {
          const uintptr_t base = 0x10000 + off;
          for (int64_t m : {1, 3, 8, 13, 200}) {
            std::vector<int> seen(static_cast<size_t>(m), 0);
            int64_t total = 0;
            for (int j = 0; j < p; ++j) {
              const ResidueClass rc = residue_class(base, ld, elem, j);
              EXPECT_EQ(rc.base % 16, 0u);
              EXPECT_GE(rc.shift, 0);
              EXPECT_LT(rc.shift, 16 / elem);
              const int64_t rows = residue_rows(m, p, j);
              total += rows;
              for (int64_t q = 0; q < rows; ++q) {
                // Map j's row q, column rc.shift: where the tile reads row j + q p, column 0.
                const uintptr_t addr = rc.base + static_cast<uintptr_t>((q * p * ld + rc.shift) * elem);
                const int64_t row = j + q * p;
                ASSERT_LT(row, m);
                EXPECT_EQ(addr, base + static_cast<uintptr_t>(row * ld * elem)) << "class " << j << " row " << q;
                ++seen[static_cast<size_t>(row)];
              }
            }
            EXPECT_EQ(total, m);
            for (int64_t i = 0; i < m; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << "row " << i;
          }
        }
      }
}

// Shared-memory row s of a tile holds class s / (128 / P)'s row s % (128 / P), i.e. the tile's row
// P (s % (128 / P)) + s / (128 / P): a permutation of 0 .. 127, the identity for P = 1.
TEST(Residue, TileRowsArePermuted) {
  for (int log2p = 0; log2p <= 3; ++log2p) {
    const int p = 1 << log2p, per = kResidueTileRows / p;
    std::vector<int> hit(kResidueTileRows, 0);
    for (int s = 0; s < kResidueTileRows; ++s) {
      const int r = tile_row(s, log2p);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, kResidueTileRows);
      EXPECT_EQ(r % p, s / per) << "row " << r << " is in class " << s / per;
      EXPECT_EQ(r / p, s % per);
      if (log2p == 0) {
        EXPECT_EQ(r, s);
      }
      ++hit[static_cast<size_t>(r)];
    }
    for (int r = 0; r < kResidueTileRows; ++r) EXPECT_EQ(hit[static_cast<size_t>(r)], 1);
    // A consumer's first row (s = 64 w) is its smallest: the kernel skips a consumer whose first row is past m.
    for (int w = 0; w < 2; ++w)
      for (int l = 0; l < 64; ++l) EXPECT_LE(tile_row(64 * w, log2p), tile_row(64 * w + l, log2p));
  }
}

}  // namespace
}  // namespace rungs::detail
