// Row residue classes (rung 24): reading a k-contiguous operand in place when TMA cannot address
// its rows. Host and device (the CPU tests check the layout).
//
// TMA needs a 16-byte aligned base and a row stride that is a multiple of 16 bytes. A matrix with
// ld * elem % 16 != 0 breaks that, but its rows fall into P residue classes (P = 16 / gcd(ld * elem,
// 16), at most 8 for 2-byte elements): rows j, j + P, j + 2P, ... start at addresses that differ by
// P * ld * elem, a multiple of 16. So class j is a matrix TMA can read: rows every P * ld elements
// from row j's start, the base rounded down to 16 bytes and the columns shifted right by what the
// rounding took off (`shift`, < 16 / elem elements). A box at column k0 + shift reads row j's
// columns k0 .. from the true start; the shifted columns before it are never asked for, and columns
// past k + shift are outside the map (zero-filled).
//
// A 128-row tile then comes in P boxes of 128 / P rows, class after class: shared-memory row s of
// the tile holds the tile's row P (s % (128 / P)) + s / (128 / P). The product's rows come out in
// that order, and the epilogue puts each where it belongs (tile_row below). k is untouched, so
// the other operand is read as before.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RUNGS_RES_HD __host__ __device__ __forceinline__
#else
#define RUNGS_RES_HD inline
#endif

namespace rungs::detail {

constexpr int kResidueTileRows = 128;  // the tile's rows (BM of rungs 15-24)
constexpr int kResidueMaxClasses = 8;  // 16 / 2: two-byte elements with an odd ld

// The number of classes for rows of `cols` elements of `elem` bytes (1, 2, 4 or 8) every `ld`
// elements: the period of the rows' 16-byte residues. 1 where ld * elem % 16 == 0 (only the base
// may need the shift then). Doubled, up to kResidueTileRows, while a class's stride P * ld would not
// hold a shifted row (cols + 16 / elem elements): the map's row stride must cover its row's bytes.
RUNGS_RES_HD int residue_classes(int64_t ld, int64_t cols, int elem) {
  const int64_t bytes = ld * elem;
  int low = 16;  // the largest power of two <= 16 dividing bytes
  while (low > 1 && bytes % low != 0) low /= 2;
  int p = 16 / low;
  while (p < kResidueTileRows && p * ld < cols + 16 / elem) p *= 2;
  return p;
}

// log2 of a power of two.
RUNGS_RES_HD int residue_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

// Class j of a matrix at `base` (rows every ld elements of elem bytes) with p classes: the 16-byte
// aligned address its map starts at, and the shift (elements) of its rows' first columns past it.
struct ResidueClass {
  uintptr_t base;
  int shift;
};
RUNGS_RES_HD ResidueClass residue_class(uintptr_t base, int64_t ld, int elem, int j) {
  const uintptr_t start = base + static_cast<uintptr_t>(j) * static_cast<uintptr_t>(ld) * static_cast<uintptr_t>(elem);
  const uintptr_t aligned = start & ~static_cast<uintptr_t>(15);
  return {aligned, static_cast<int>((start - aligned) / static_cast<uintptr_t>(elem))};
}

// The rows of class j among `rows` rows with p classes: j, j + p, ... < rows.
RUNGS_RES_HD int64_t residue_rows(int64_t rows, int p, int j) { return rows > j ? (rows - j + p - 1) / p : 0; }

// The row of the tile (0 .. 127) that shared-memory row s holds with 2^log2p classes.
RUNGS_RES_HD int tile_row(int s, int log2p) {
  const int per = kResidueTileRows >> log2p;  // rows per class in a tile
  return ((s & (per - 1)) << log2p) + (s >> (7 - log2p));
}

}  // namespace rungs::detail

#undef RUNGS_RES_HD
