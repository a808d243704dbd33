// Rung 33, decode_paired: rung 26 (decode_wgmma) with two k tiles of W per TMA stage.
// Adds over rung 26: each stage holds two consecutive k tiles (each W's BM x 64 box and A's N x 64
// box, as rung 26's stage), loaded together, so the producer asks for 256 contiguous bytes of every
// row of W at once where rung 26 asks for 128 and the next 128 a stage later. The stages hold the
// same bytes in flight (at most 4 of 2 k tiles where rung 26 has 8 of 1), the grid, the splits and
// their sums through distributed shared memory are rung 26's (26_decode_wgmma.cuh at G = 2:
// `diff 26_decode_wgmma.cu 33_decode_paired.cu` shows the change). Where fewer than 3 stages of two
// k tiles fit (the 256-row tiles at N = 64 and 128), one k tile per stage, rung 26 itself; so too
// where k has an odd number of k tiles (ceil(k / 64)): the last stage would hold a k tile wholly
// past k, and skipping its MMAs takes a branch, which serializes wgmma.
// Why: a bare read of W in rung 26's pattern, without the MMAs (scripts/experiments/tile_read.cu,
// H100), takes 46.9 us at 7168 x 8192 in 128 x 64 boxes one k tile per stage on 112 blocks, 43.9 us
// with two k tiles per stage, 40.3 us read contiguously; at 28672 x 8192 163.1, 159.6 and 151.7 us.
// DRAM serves a row's 256 bytes asked for together faster than two 128-byte requests a stage apart.
// Fallback inside the rung (slower, same answer): as rung 26 (rung 14).
// Bound now: reading W in 128-row boxes (the probe's 43.9 us at 7168 x 8192, 8 % above a contiguous
// read), the 112 blocks on 132 SMs at n = 7168 and the splits' sums, as rung 26.
// Prediction (H100, bf16 nt, % of the DRAM read bandwidth with W + A + C): the probe's 3 us at 7168
// x 8192, 45-46 us to 42.5-44 us (86-89 %) at m <= 64; 28672 x 8192 about 2 % faster at m <= 32
// (128-row tiles), level at m = 64 / 128 on 256-row tiles (rung 26's kernel there).
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_paired {

namespace {

using namespace decode_wgmma;
using detail::ceil_div;

// Two k tiles per stage where 3 or more such stages fit the SM, else one.
template <int N, int H>
constexpr int ktiles_per_stage() {
  return stages<N, H, 1, 2>() >= 3 ? 2 : 1;
}

template <typename T, int N, int H, bool W_MN, int G>
void launch(const ArgsT<T>& a) {
  const Maps maps = make_maps<T, N, H, W_MN>(a);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK * G);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  launch_grid<T, N, H, W_MN, 1, G>(a, maps, tiles_n, groups, split_count(tiles, KT, sms), "decode_paired");
}

template <typename T>
void run16(const ArgsT<T>& a, void (*fallback)(const ArgsT<T>&)) {
  detail::require_sm90a("decode_paired");
  if (!tma_path(a)) return fallback(a);
  // Rung 26's tile shapes: 256-row tiles (N >= 64) where they alone give half the SMs a whole tile.
  const int64_t sms = detail::sm_count();
  with_shape(a, [&](int64_t wide_tiles) { return 2 * wide_tiles >= sms; }, [&](auto n, auto h, auto w_mn) {
    constexpr int N = decltype(n)::value, H = decltype(h)::value, G = ktiles_per_stage<N, H>();
    constexpr bool W_MN = decltype(w_mn)::value;
    if (ceil_div(a.k, int64_t(BK)) % G == 0) launch<T, N, H, W_MN, G>(a);
    else launch<T, N, H, W_MN, 1>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a, wgmma::run_f16); }
void run_bf16(const ArgsBF& a) { run16(a, wgmma::run_bf16); }

}  // namespace rungs::sgemm::decode_paired
