// Rung 26, decode_wgmma: decode products C = A W^T (m = 1..128 rows of A; W n x k as a Linear layer
// keeps it, tb == T, or k x n) on wgmma with the operands swapped; f16 and bf16, sm_90a, any m. A
// stored k x m and rows TMA cannot address are copied first (pack::operands_a_k: A's few rows).
// Adds over the tiled wgmma rungs (m on the 64-row side: mostly padding at small m): C^T = W A^T, W's
// rows on the 64-row side, m as wgmma's N (rounded up to 8, 16, 32, 64 or 128, a kernel per N; m > 128
// in groups of 128 along the grid's y). The decode frame; its parts are in 26_decode_wgmma.cuh.
// A block: BM rows of W over two consumer warpgroups; a producer warp streams W's box and A's N x 64
// box (128-byte swizzle) by TMA through up to 8 stages (112-160 KB of W in flight, one block per SM).
// W k x n is read in place through wgmma's transpose bit: the same bytes a stage as n x k. BM = 256 at
// N = 64 / 128 where n gives half the SMs a whole tile (n > 16640 on 132 SMs): A's box, as large as
// W's at N = 128, is then read from L2 once per 256 rows of W instead of 128. Fewer tiles than SMs:
// k split over gridDim.z (at most 8 splits of >= 4 k tiles, fewer where the cluster does not fit a
// GPC); a tile's splits are one cluster whose blocks add their fp32 sums in split order through
// distributed shared memory (ld.shared::cluster): deterministic, one launch, no workspace. The store
// is transposed (C[j][i] = alpha d[i][j] + beta C), masked, C unread when beta == 0. 128-row boxes of
// W n x k promote L2 fills to 64 bytes (2-4 % faster on the H200; 256-row boxes keep 256).
// Bounded by: reading W once from DRAM; the whole-tile grid leaves SMs idle (n = 7168: 112 blocks on
// 132 SMs); the split sums' exchange after the last k tile; A's boxes re-read from L2 by every block.
// Prediction: the cluster exchange (not a workspace and a second kernel) takes 7168 x 8192 nt, m <= 32,
// from 48-50 to ~45-47 us (H100); measured: 46.1-46.9 us (0.96-1.07x cuBLAS), nn at nt's speed.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wgmma {

namespace {

using detail::ceil_div;

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  // The L2 promotion as the header says: 64 bytes for 128-row boxes of W n x k, else 256.
  const Maps maps = make_maps<T, N, H, W_MN>(a, H == 1 && !W_MN ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                                                : CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  launch_grid<T, N, H, W_MN, 1>(a, maps, tiles_n, groups, split_count(tiles, KT, sms), "decode_wgmma");
}

// A stored k x m (a transposed copy: A is the product's few rows) and rows TMA cannot address
// (an aligned copy) are made readable first (pack::operands_a_k).
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_wgmma");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  // 256-row tiles (N >= 64) where they alone give half the SMs a whole tile: no split then, or one
  // that keeps the partial sums small; shorter n keeps 128 rows (twice the tiles, half the splits).
  const int64_t sms = detail::sm_count();
  with_shape(a, [&](int64_t wide_tiles) { return 2 * wide_tiles >= sms; }, [&](auto n, auto h, auto w_mn) {
    launch<T, decltype(n)::value, decltype(h)::value, decltype(w_mn)::value>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

}  // namespace rungs::sgemm::decode_wgmma
