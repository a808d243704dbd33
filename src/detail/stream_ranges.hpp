// Rung 27's cut of a decode product's work into equal ranges. Host and device (the CPU tests
// replay it).
//
// The work is the list of units (tile, k tile), u = tile * KT + kt, cut into P contiguous ranges as
// equal as integers allow: range b = [units b / P, units (b + 1) / P). A range crosses tiles: its
// segments are its parts of the tiles it touches, each a run of k tiles kb .. ke - 1 of one tile;
// only a range's first and last segment can cut a tile.
#pragma once

#include "detail/host_device.hpp"

#include <cstdint>

namespace rungs::detail {

struct StreamRanges {
  int64_t units = 0, P = 1, KT = 1;
  // The first unit of range b (b = P: units).
  RUNGS_HD int64_t start(int64_t b) const { return units * b / P; }
  // The range that holds unit u: the last b whose range starts at or before u.
  RUNGS_HD int64_t owner(int64_t u) const { return ((u + 1) * P - 1) / units; }
  // Range b's segments: one per tile it touches (0 for an empty range).
  RUNGS_HD int segments(int64_t b) const {
    const int64_t u0 = start(b), u1 = start(b + 1);
    return u1 > u0 ? static_cast<int>((u1 - 1) / KT - u0 / KT + 1) : 0;
  }
  // Segment p of range b: its tile and its k tiles kb .. ke - 1.
  RUNGS_HD void segment(int64_t b, int p, int64_t& tile, int& kb, int& ke) const {
    const int64_t u0 = start(b), u1 = start(b + 1);
    tile = u0 / KT + p;
    const int64_t t0 = tile * KT;
    kb = static_cast<int>((u0 > t0 ? u0 : t0) - t0);
    ke = static_cast<int>((u1 < t0 + KT ? u1 : t0 + KT) - t0);
  }
  // Whether some range starts inside a tile (then cut tiles need their sums added).
  RUNGS_HD bool cuts() const {
    for (int64_t b = 1; b < P; ++b)
      if (start(b) % KT != 0) return true;
    return false;
  }
};

}  // namespace rungs::detail
