// Rung 33, decode_multicast: rung 26 (decode_wgmma) with A's boxes shared by pairs of tiles.
// Adds over rung 26: every block of rung 26 reads its own N x 64 box of A from L2 per k tile, as
// many bytes as its 128 x 64 box of W at N = 128 (half at 64, a quarter at 32), so at m = 64-128 an
// SM draws up to twice W's bytes into shared memory. Here the tiles are paired along x in clusters
// of CX = 2 (times the splits along z: 2 x 1 x splits blocks, at most 8), and each block of a pair
// loads half of the box's rows into both blocks' stages at once (TMA multicast): each SM fetches
// W plus half of A. A stage is then filled by both producers of the pair, so each block's `empty`
// barrier counts the releases of both blocks' consumer warpgroups (remote mbarrier arrives), and
// both blocks stay until the pair is done with each other's barriers (a cluster barrier at the
// end). N = 8 (m <= 8) keeps rung 26's launch: A's box is 1 KB, and half of it would not be whole
// 8-row swizzle atoms. An odd count of tiles gets one block past W's last row, which loads only
// its half of A. The kernel is rung 26's (26_decode_wgmma.cuh, at CX = 2): `diff
// 26_decode_wgmma.cu 33_decode_multicast.cu` shows the launch.
// Fallback inside the rung (slower, same answer): as rung 26 (rung 14).
// Bound now: reading W once from DRAM; as rung 26, the grid of whole tiles and splits leaves SMs
// idle (n = 7168: 112 blocks on 132), and the split sums cross the SMs; a pair waits for the slower
// of its two producers.
// Prediction (bf16 nt, 7168 x 8192, where rung 26 trails cuBLAS from m = 32): if A's share of each
// SM's fetches costs what it seems to (rung 26 takes 45.1 us at m = 1, 50.0 at m = 128 on an H100;
// 35.0 and 41.5 on an H200), halving it recovers about half of that: H100 m = 128 ~47.5 us, m = 64
// ~46 us (cuBLAS 46.1 / 44.6); H200 m = 128 ~38 us, m = 64 ~36 (cuBLAS 35.4 / 33.2); m <= 16 level.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_multicast {

namespace {

using namespace decode_wgmma;
using detail::ceil_div;

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  constexpr int CX = N >= 16 ? 2 : 1;  // tiles sharing A's boxes
  const Maps maps = make_maps<T, N, H, W_MN, CX>(a);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  int64_t splits = 1;
  if (tiles < sms) splits = std::max<int64_t>(1, std::min({sms / tiles, KT / MIN_KT_PER_SPLIT, MAX_SPLITS}));
  launch_grid<T, N, H, W_MN, 1, CX>(a, maps, tiles_n, groups, splits, "decode_multicast");
}

template <typename T>
void run16(const ArgsT<T>& a, void (*fallback)(const ArgsT<T>&)) {
  detail::require_sm90a("decode_multicast");
  if (!tma_path(a)) return fallback(a);
  // Rung 26's tiles: 256 rows (N >= 64) where they alone give half the SMs a whole tile.
  const int64_t sms = detail::sm_count();
  with_shape(a, [&](int64_t wide_tiles) { return 2 * wide_tiles >= sms; }, [&](auto n, auto h, auto w_mn) {
    launch<T, decltype(n)::value, decltype(h)::value, decltype(w_mn)::value>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a, wgmma::run_f16); }
void run_bf16(const ArgsBF& a) { run16(a, wgmma::run_bf16); }

}  // namespace rungs::sgemm::decode_multicast
