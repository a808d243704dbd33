// Rung 26, decode_wgmma: decode-shaped products (few rows of activations m, a large weight W
// stored n x k, tb == T as PyTorch's Linear keeps it, or k x n, tb == N) on the tensor cores with
// the operands swapped.
// Adds over the rungs below: the wgmma rungs give m the 64-row side of each MMA, so at m = 1..128
// most of every instruction multiplies padding. This rung computes C^T (n x m) = W (n x k) * A^T:
// W's rows fill wgmma's 64-row side, m is its N (m rounded up to 8, 16, 32, 64 or 128:
// wgmma.m64nNk16, one kernel per N); m > 128 takes groups of 128 rows of A along the grid's y.
// A block covers BM rows of W (two consumer warpgroups of BM / 2) and all N rows of A; a producer
// warp streams W and N x 64 boxes of A (128-byte swizzle) by TMA through up to 8 mbarrier stages.
// W n x k (nt): BM x 64 boxes, k-contiguous like A. W k x n (nn): 64 x 64 boxes of k-rows, read
// in place by wgmma with its transpose bit (an MN-major A operand), no copy: the same bytes per
// stage, so nn streams as nt does. BM = 128 (8 stages, 7 at N = 128: 112-128 KB of W in flight per
// SM), or 256 at N = 64 and 128 where n gives half the SMs a whole 256-row tile (2 ceil(n / 256)
// groups >= SMs: n > 16640 at one group of A on 132 SMs): each warpgroup then runs two m64 wgmmas
// per k16 and the block reads A's box once per 256 rows of W instead of 128, halving the L2
// traffic of A, which at N = 128 is as large as W's (5 and 4 stages: 160 and 128 KB of W in
// flight). One block per SM. The epilogue writes C from the accumulators transposed (C[j][i] =
// d[i][j]), masked, alpha / beta per element, C unread when beta == 0.
// Fewer tile blocks than SMs (n = 7168: 56): k is split over gridDim.z (as many splits as whole
// multiples of the tiles fit the SMs, each at least 4 k tiles, at most 8, fewer where a cluster
// of them does not fit a GPC), and a tile's splits are one thread block cluster along z, so they
// run together. At the end each block leaves its fp32
// sums in its own shared memory (where its stages were), the cluster syncs, and block z adds
// slice z of the tile over the cluster's blocks in split order through distributed shared memory
// (ld.shared::cluster), applies alpha / beta and stores it: deterministic, one launch, no
// workspace, the partial sums never leave the SMs. Where W comes n x k in 128-row boxes, its and
// A's tensor maps promote L2 fills from DRAM to 64 bytes instead of 256: 2-4 % faster on the H200
// at 7168 x 8192 (m = 1-128) and 28672 x 8192 (m = 1, 16); 256-row boxes read 1-3 % slower with it
// and keep 256 (scripts/experiments/l2_promotion.patch, decode_grid.cu).
// Slower paths inside the rung (same answer): A stored k x m (ta == T) is first copied m x k (a copy
// of A's few rows), rows TMA cannot address (16-byte aligned base and ld * 2 % 16 == 0) with an
// aligned stride (pack::operands_a_k).
// Bound now: reading W once from DRAM is the floor; the grid is whole tiles times
// whole splits, so SMs can idle (n = 7168 at m <= 128: 112 blocks on 132 SMs; n = 28672 at N >= 64:
// 112 256-row tiles); with splits, the sums' exchange through distributed shared memory after the
// last k tile ((splits - 1) / splits of a BM x N fp32 tile per block: 32 KB at N = 128); the A
// boxes re-read by every block from L2 (N x 128 bytes per 128 or 256 rows of W).
// Prediction (H100, against the first form of this rung: split sums through a global workspace
// and a second kernel): split shapes lose the second kernel, its launch and the sums' round trip
// through L2: 7168 x 8192 nt from 48.2-50.3 us (m = 1..32) to ~45-47 us, m = 64 / 128 from 52.3 /
// 56.8 to ~48-50 / ~51-53 us (A's L2 reads stay: BM = 128 there); 28672 x 8192 nt at m = 64 / 128
// from 90-92 % of DRAM to ~93-95 % (256-row tiles); nn at nt's speed (7168 x 8192: 83-85 us ->
// nt's; 28672 x 8192: 169-173 -> ~158-165 us).
// Measured (H100 SXM, f36fe0c, bf16, median of 20 interleaved with cuBLAS, % of the DRAM read
// bandwidth counting W + A + C): nt 7168 x 8192 46.1 / 46.1 / 46.1 / 46.9 / 47.6 / 51.7 us at
// m = 1 / 8 / 16 / 32 / 64 / 128 (82 / 82 / 83 / 82 / 81 / 76 %, 1.07 / 1.07 / 0.98 / 0.96 / 0.97 /
// 0.90x cuBLAS): the split shapes as predicted; 28672 x 8192 95 / 94 / 95 / 93 / 92 / 91 %
// (1.07 / 1.05 / 1.06 / 1.02 / 1.03 / 1.00x): m = 64 / 128 gained 1-2 points with 256-row tiles,
// short of the predicted 93-95; 8192 x 28672 95-96 % to m = 32, 94 / 92.5 % at 64 / 128 (1.04-1.08x).
// nn at nt's speed, as predicted: 7168 x 8192 84 / 83 / 83 / 77 % at m = 1 / 16 / 64 / 128 (0.86-1.04x
// cuBLAS, which reads k x n faster than n x k: 81-88 %), 28672 x 8192 92-94 % (0.98-1.01x). f16
// within 2 % of bf16. H200 (4.8 TB/s): nt 7168 x 8192 66-73 % (1.09-1.11x cuBLAS at m <= 16,
// 0.86-0.92x above), 28672 x 8192 85-87 % (0.94-1.02x), 8192 x 28672 85-91 % (1.01-1.07x).
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
