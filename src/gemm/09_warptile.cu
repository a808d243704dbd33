// Rung 09, warptile: the flagship CUDA-core SGEMM. Over rung 08 it adds
//  - warp tiling as a parameter: each warp owns a WM x WN sub-tile, each lane TM x TN outputs
//    in 4x4 sub-tiles that interleave with the other lanes' (sub-tile i of lane row r starts at
//    warp row 4*LM*i + 4*r), so every LDS.128 of a fragment reads LM (or LN) <= 8 distinct
//    contiguous float4s shared by broadcast: 1 wavefront, for any tile shape -- rung 08's fixed
//    16 x 16 placement is the 32x64-warp, 8x8-lane case of this, and 16x8 per lane (fewer LDS
//    per FFMA) or smaller block tiles (more blocks for small problems) become possible;
//  - register double buffering: the fragments of k+1 load while the FFMAs of k run, and the
//    k-tile barrier sits before the last k's FFMAs so the next tile's first fragments load
//    under them: no LDS latency is exposed, even with a single block per SM;
//  - a block swizzle (bands of 8 tile rows) so resident blocks share A and B panels in L2;
//  - a float4 epilogue when C allows it (float4_ok), scalar and masked otherwise;
//  - tile configurations chosen per shape (table below; `rungs tune gemm` measures them all);
//  - split-K where the tiles leave SM block slots empty (1024^3: 128 tiles of 64x128 for 132 SMs x
//    4 slots, one warp per scheduler): k cut into up to 4 pieces, partial products in a
//    stream-ordered workspace, summed in split order by a second kernel (reduce_splits);
//  - optionally the k-tile as a loop of KU-step groups instead of fully unrolled (configs _u4),
//    and the FFMAs of a k step in 2 x 2 blocks walked as a serpentine (configs _o1): both a and
//    b values can stay in the operand reuse caches, so fewer register-file reads per FFMA.
// Shared-memory pipeline as rung 08 (STAGES-deep cp.async ring, one barrier per k-tile, the
// k-contiguous operand transposed by 4-byte copies; see detail/gemm_pipeline.cuh), with BK = 16
// so the per-tile fixed cost (barrier, wait, stage rotation, copy issue) is spread over 1024
// FFMA per thread, and interior tiles copied without any bounds test.
//
// Bounded by: FFMA issue. Napkin for the default 128x128x16, 256 threads, 8x8 per lane:
//  - per k a lane issues 64 FFMA + 4 LDS.128; per k-tile add ~25 instructions of copies for the
//    transposed operand, ~10 for the other, ~20 of barrier/loop: ~1145 issue slots for 1024
//    FFMA, so at most ~89% of the 128 FFMA/clk/SM (~60 TFLOP/s at 1.98 GHz, less under power
//    capping) -- cuBLAS's SASS-tuned kernels sit at ~76% of peak;
//  - shared memory: 4 wavefronts per 64 warp-FFMAs = 25% of the 1 wavefront/clk/SM at FFMA
//    peak (+~2% for the cp.async writes): not the limit any more;
//  - registers: 64 accumulators + 2 x 16 fragments + ~30 addressing = 127 (<= 128), so 2 blocks
//    (16 warps, 4 per scheduler) per SM; shared memory 3 x 16 KB = 50 KB per block;
//  - L2 -> SM: (128+128) x 16 x 4 B per 2 x 128 x 128 x 16 FLOP = 32 FLOP/B: 1.6 TB/s at
//    50 TFLOP/s, a fraction of L2 bandwidth; DRAM traffic is lower still thanks to the swizzle.
// The 16x8-per-lane configs (128x256, 256x128) halve the LDS share (6 per 128 FFMA) and need
// 255 registers, so one block (8 warps) per SM. Small problems (1024^2 is only 64 tiles of
// 128x128 for 132 SMs) take 64x128 or 64x64 tiles to occupy every SM.
// Measured (H100 SXM, NN, 5668856; docs/gemm.md): the picks run 46.5 TFLOP/s at 2048^3 (128x256x32
// _u4_o1), 48.6 at 4096^3 and 49.1 at 8192^3 (128x256x64 s2 _u4_o1): 0.93 / 0.94 / 0.95x cuBLAS;
// 64x128x16 _u4_o1 split 4 0.99x at 1024^3 and 1536^3 (split-K was predicted 1.15x and gave 1.12x
// over no split). The looped k-tiles with the 2 x 2 FFMA order run 3 % faster than without it; ptxas
// keeps only part of the order (2.2 register-file reads per FFMA, cuBLAS 1.66:
// scripts/experiments/sass_regreads/sass_regreads.py), and that is the gap to cuBLAS.
// ncu at 4096^3 (f7ed9c0, scripts/experiments/ncu_sgemm/ncu_sgemm.sh, docs/gemm.md): 128x256x16 issues on
// 77 % of cycles (IPC 3.22, FFMA 91.7 % of the main loop's instructions) where cuBLAS's SIMT kernel
// (256x128x8, 8 warps of 64x64, 16x8 per thread, 3 stages, 254 registers) issues on 87 % (IPC 3.60,
// FFMA 88.7 %): we issue fewer instructions per FFMA but stall more ("dispatch" 8.5 % of samples
// against 4.7 %, "no instruction" 6.3 against 0.6, "wait" 4.2 against ~0). The 4-step loop (_u4)
// cuts "no instruction" to 2.0 %, "dispatch" grows to 10.7 % and the issue rate does not move
// (47.0-47.3). The transposed copy of the k-contiguous operand costs 4-8% (tn 47.2 vs nn 45.4 vs
// nt 43.3 at 4096, 128x128x16). The tuner times more candidates than the picks
// (src/tune/warptile.cu says which and what they measured; docs/gemm.md, "Measured and not kept").
// The kernel and its tile configurations are in 09_warptile.cuh, which the tuner shares; this file
// compiles the picked configurations and chooses among them.
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

// Choice table, from `rungs tune gemm` on H100 SXM (median of 20-30, L2 flushed):
//   At 970c2d9, 4096^3: 128x128x16 45.8, 128x128x32 46.3, 128x256x16 47.3, 256x128x16 45.1,
//           64x128x16 46.3, 64x64x16 38.7 TFLOP/s (cuBLAS 51.7-52.0);
//   2048^3: 128x256x16 45.3 (0.91 of cuBLAS); 8192^3: 128x256x16 48.0 (0.93);
//   1024^3: 64x128x16 29.2 (0.88 of cuBLAS's 33).
//   Split-K and the looped k-tile (tune at 7a97a94): 1024^3 64x128x16 0.0725 ms (0.88x), _u4
//   0.0716 (0.90x), _k4 0.0669 (0.96x), _u4_k4 0.0646 (0.99x; cuBLAS 0.064); 2048^3 _u4 44.2
//   against 64x128x16 43.5 and 128x256x16 45.7 TFLOP/s (0.91x).
//   The _o1 configs (5668856; docs/gemm.md): NN 2048 / 4096 / 8192^3 128x256x16
//   0.378 / 2.898 / 22.91 ms, 128x256x32_u4_o1 0.367 / 2.818 / 22.54, 128x256x64_s2_u4_o1 0.368 /
//   2.806 / 22.40 (0.93 / 0.94 / 0.95x cuBLAS); with B stored n x k (NT, TT) 256x128x32_u4_o1 is
//   first: TT 4096^3 2.809 against 3.037 for 128x256x32_u4_o1 and 3.262 for 128x256x16 (the
//   operand copied with 4-byte transposing cp.async gets the tile's short side). 64x128x16_u4_o1
//   split 4: 1024^3 0.0644 ms (0.99x), 1536^3 0.193 (0.99x; unsplit 0.226, split 2 0.204).
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
