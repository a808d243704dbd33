// Rung 09, warptile: the flagship CUDA-core SGEMM (fp32 FFMA; any transpose, ld and alignment).
// Adds over 08 double_buffer:
//  - warp tiles as a parameter: each warp owns WM x WN, each lane TM x TN outputs in 4x4 sub-tiles
//    interleaved with the other lanes' (sub-tile i of lane row r starts at warp row 4*LM*i + 4*r), so
//    every LDS.128 of a fragment reads <= 8 distinct float4s by broadcast: 1 wavefront for any tile
//    shape (rung 08's placement is the 32x64-warp, 8x8-lane case), which opens 16x8 per lane;
//  - register double buffering: the fragments of k+1 load under the FFMAs of k, and the k-tile
//    barrier sits before the last k's FFMAs: no LDS latency shows, even at one block per SM;
//  - a block swizzle (bands of 8 tile rows) so resident blocks share A and B panels in L2, and a
//    float4 epilogue where C allows it (scalar and masked otherwise);
//  - a tile configuration per shape (kPicks below), split-K where the tiles leave block slots empty,
//    and a k-tile looped in groups of 4 (_u4) with FFMAs in 2 x 2 serpentine blocks (_o1), so a and b
//    values can stay in the operand reuse caches.
// The shared-memory pipeline is rung 08's (detail/gemm_pipeline.cuh), with BK >= 16 to spread each
// k-tile's fixed cost. The kernel and its configurations live in 09_warptile.cuh (shared with the
// tuner); this file compiles the picked ones and chooses among them.
// Bounded by: FFMA issue. 128x128x16: ~1145 issue slots per 1024 FFMA (<= ~89 % of peak), shared
// memory at a quarter of its rate; beyond that, register-bank reads: ~2.2 per FFMA where cuBLAS's
// SASS gets 1.66, an order ptxas does not keep (docs/gemm.md, "Why warptile trails cuBLAS sgemm").
// Prediction: split-K 1.15x over none at 1024^3; measured: 1.12x; the picks 0.99 / 0.93 / 0.94 /
// 0.95x cuBLAS at 1024 / 2048 / 4096 / 8192^3 (H100).
#include "gemm/09_warptile.cuh"

#include <algorithm>
#include <cstdint>

namespace rungs::sgemm::warptile {

// The kernels of the picked configurations (09_warptile.cuh declares them extern for everyone else).
template void launch_any<Small>(const Args&, int);
template void launch_any<MidUO>(const Args&, int);
template void launch_any<Wide32UO>(const Args&, int);
template void launch_any<Wide64UO>(const Args&, int);
template void launch_any<Tall32UO>(const Args&, int);

namespace {

// C = alpha * (ws[0] + ... + ws[splits-1]) + beta * C (C not read when beta == 0), summed in split
// order: one thread per element of C, consecutive threads along a row.
__global__ void reduce_splits(const float* __restrict__ ws, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float* __restrict__ C, int64_t ldc) {
  const int64_t mn = m * n;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < mn;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = ws[e];
    for (int z = 1; z < splits; ++z) s += ws[z * mn + e];
    detail::epilogue_store(C, ldc, e / n, e % n, s, alpha, beta);
  }
}

// Choice table, from `rungs tune gemm` on H100 SXM (median of 20-30, L2 flushed; each pick's times
// against the runner-up: docs/gemm.md, "What `auto` picks"). With B stored n x k (nt, tt)
// 256x128x32_u4_o1 comes first: the operand copied with 4-byte transposing cp.async gets the tile's
// short side.
// The first row whose config cuts the problem into at least min_tiles_per_sm tiles per SM wins
// (the last row always does); b_kc names the configuration used when B is stored n x k.
// Split-K (split_for): where the picked configuration's tiles fill at most 60 % of the SMs' block
// slots (1024^2 at 64x128: 128 tiles of 4 warps for 132 SMs x 4 slots; 1536^2: 288), k is cut
// into up to 4 pieces of at least 256 k each (2048^2 at 64x128, 97 % of the slots: split 2 and 4
// measured 6-11 % slower than none).
struct Pick {
  Config config;
  Config b_kc;
  double min_tiles_per_sm;
};
constexpr Pick kPicks[] = {
    {config<Wide64UO>(), config<Tall32UO>(), 2.0},  // ~2900^2 and up
    {config<Wide32UO>(), config<Tall32UO>(), 0.9},  // ~2000^2 and up
    {config<MidUO>(), config<MidUO>(), 0.9},        // ~1000^2 .. 2000^2
    {config<Small>(), config<Small>(), 0.0},        // everything smaller
};
constexpr int kMaxSplits = 4;
constexpr int64_t kMinSplitK = 256;
constexpr double kSplitBelow = 0.6;  // of the block slots

int split_for(const Config& c, double tiles, const Args& a, int sms) {
  const double slots = static_cast<double>(sms) * c.min_blocks;
  if (tiles > kSplitBelow * slots) return 1;
  return static_cast<int>(std::clamp<int64_t>(a.k / kMinSplitK, 1, kMaxSplits));
}

}  // namespace

void sum_splits(const Args& a, const float* ws, int splits) {
  const int64_t mn = a.m * a.n;
  const int blocks = static_cast<int>(std::min<int64_t>(detail::ceil_div(mn, 256), 8 * detail::sm_count()));
  reduce_splits<<<blocks, 256, 0, a.stream>>>(ws, splits, a.m, a.n, a.alpha, a.beta, a.C, a.ldc);
  detail::check_launch("warptile split-K reduction");
}

void run(const Args& a) {
  const int sms = detail::sm_count();
  const bool b_kc = a.tb == Trans::T;
  for (const Pick& pick : kPicks) {
    const Config& c = b_kc ? pick.b_kc : pick.config;
    const double tiles = static_cast<double>(detail::ceil_div(a.m, c.bm)) * detail::ceil_div(a.n, c.bn);
    if (tiles >= pick.min_tiles_per_sm * sms || &pick == &kPicks[sizeof(kPicks) / sizeof(kPicks[0]) - 1]) {
      c.run(a, split_for(c, tiles, a, sms));
      return;
    }
  }
}

}  // namespace rungs::sgemm::warptile
