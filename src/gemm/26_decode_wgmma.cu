// Rung 26, decode_wgmma: decode products C = A W^T (m = 1..128 rows of A; W n x k as a Linear layer
// keeps it, tb == T, or k x n) on wgmma with the operands swapped; f16 and bf16, sm_90a, any m. A
// stored k x m and rows TMA cannot address are copied first (pack::operands_a_k: A's few rows).
// Adds over 14 wgmma (m on the 64-row side: mostly padding at small m), in the Schedule, SplitKOf
// (below): the skeleton runs C^T = W A^T, W's rows on the 64-row side and m as the tile's width,
// wgmma's N (rounded up to 8, 16, 32, 64 or 128: WholeTilesOf<N, ring, fill, rows>, a kernel per N;
// m > 128 in tile columns of 128), the stored result C^T's transpose (the C_T store). A block: 128
// rows of W over two consumer warpgroups, or 256 over four at N = 64 / 128 where n gives half the
// SMs a whole tile (n > 16640 on 132 SMs: A's box, as large as W's at N = 128, then read from L2
// once per 256 rows of W); a producer warp streams W's box and A's N x 64 box (128-byte swizzle) by
// TMA through up to 8 stages (112-208 KB of W in flight, one block per SM). W k x n is read in place
// through wgmma's transpose bit. 128-row boxes of W n x k promote L2 fills to 64 bytes. Fewer tiles
// than SMs: k split over the blocks of a cluster (at most 8 splits of >= 4 k tiles, fewer where the
// cluster does not fit a GPC); each block leaves its fp32 sums where its stages were and adds its
// slice of the tile over the cluster's blocks in split order through distributed shared memory
// (ld.shared::cluster): deterministic, one launch, no workspace. The store is transposed (C[j][i] =
// alpha d[i][j] + beta C), masked, C unread when beta == 0.
// Bounded by: reading W once from DRAM; the whole-tile grid leaves SMs idle (n = 7168: 112 blocks on
// 132 SMs); the split sums' exchange after the last k tile; A's boxes re-read from L2 by every block.
// Prediction: within 0.97-1.03x of its own kernel's time at the decode shapes (the same tiles, ring,
// splits, exchange and fills); measured without the 256-row tiles and 64-byte fills: 0.94-1.02x.
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wgmma {

namespace {

// L2 fills: 64 bytes for 128-row K-major boxes of W (measured 2-4 % faster on the H200: W is read
// once), else 256.
template <int N, int TM, int FILL>
using Parts = ws::Parts<ws::SplitKOf<TM / 64>, ws::WholeTilesOf<N, ws::split_k_ring<N, TM>(), FILL, TM>, ws::DirectStore>;

// C^T = W A^T (ws::transposed) on 128- or 256-row tiles (ws::with_tile_rows).
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_wgmma");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  const ArgsT<T> s = ws::transposed(a);
  with_n(a.m, [&](auto n) {
    constexpr int N = decltype(n)::value;
    ws::with_tile_rows<N>(a, [&](auto tm) {
      constexpr int TM = decltype(tm)::value;
      if (a.tb == Trans::N) ws::launch<T, true, false, true, Parts<N, TM, 256>>(s, "decode_wgmma");
      else ws::launch<T, false, false, true, Parts<N, TM, TM == 128 ? 64 : 256>>(s, "decode_wgmma");
    });
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

std::vector<std::string> parts() { return ws::part_names<Parts<128, 128, 64>>(); }

}  // namespace rungs::sgemm::decode_wgmma
