// Rung 16's part, the narrow-tile mainloop (used by rungs 16, 20 and 22, and by 23 under Paired; why:
// 16_wgmma_narrow.cu): Ragged, whose tiles multiply only the width of B they need (the narrowest
// wgmma width that holds their columns).
#pragma once

#include "gemm/15_wgmma_ws.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// Mainloop: a tile with at most 64 (128) columns left multiplies m64n64 (m64n128) and loads only those
// columns of B.
struct Ragged : TmaStages {
  static constexpr bool ragged = true, pairs = false;
  __device__ __forceinline__ static int width(int cols_left) { return cols_left > 128 ? 256 : cols_left > 64 ? 128 : 64; }
  __device__ __forceinline__ static bool two(int, bool) { return false; }
  template <class Walk, class Mainloop, class Paired>
  __device__ __forceinline__ static void multiply(const Walk& walk, int p, int t, int64_t m, int64_t n, int cw,
                                                  Paired&& paired, Mainloop&& mainloop) {
    int m0, n0;
    bool solo;
    walk.tile(p, t, m0, n0, solo);
    const int nb = width(static_cast<int>(n) - n0);
    const bool two = paired(nb, solo);
    // A consumer whose rows all lie past m multiplies too, 64 columns wide, and stores nothing:
    // with no MMAs at all (a mainloop that only takes and releases the stages) the kernel hung now
    // and then, every stuck waiter such a consumer or its block's, at the first stage of the last
    // tile row (rung 17, whose consumers always multiply, never hung). The cause is not understood;
    // this keeps each consumer's pace through the stages that of rung 17's, and the hang is gone
    // (scripts/experiments/hang_probe/hang_probe.sh: 9,000 launches clean).
    if (nb == 64 || m0 + 64 * cw >= m) mainloop(std::integral_constant<int, 64>{}, two);
    else if (nb == 128) mainloop(std::integral_constant<int, 128>{}, false);
    else mainloop(std::integral_constant<int, 256>{}, false);
  }
};

}  // namespace rungs::sgemm::ws
