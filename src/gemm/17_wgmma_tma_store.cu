// Rung 17, wgmma_tma_store: rung 15 (warp-specialized, persistent, clustered wgmma, sm_90a) with
// its epilogue through shared memory and TMA stores; f16, bf16 and tf32 as rung 15.
// Adds over 15 wgmma_ws: each consumer warpgroup writes its 64 x 256 accumulator (alpha applied,
// converted to C's type) into its own 16 KB shared buffer in the 128-byte swizzle (conflict-free),
// 64 rows x 256 bytes at a time, and one thread sends each piece with two TMA box stores
// (detail::store_acc_64x256_tma). The consumers then go straight on to the next tile: the stores
// drain in the background while the tensor cores work, and they move whole 128-byte rows where
// rung 15's direct stores wrote 16 bytes per row per warp instruction. TMA clips at m, and at n
// only to 16 bytes (it writes the whole 16-byte chunk holding column n - 1: into the user's ld
// padding): when n's row bytes are not a multiple of 16, the last tile column stores directly.
// beta != 0 (C must be read) or a C whose base or rows are not 16-byte aligned take rung 15's
// direct epilogue. Shared memory: 4 stages of 48 KB + 2 x 16 KB = 224 KB.
// Why: ncu on the H100 (bf16, 4096^3 and 8192^3, docs/gemm_tc.md) put rung 15's tensor pipe at
// 76 % / 87 % of its elapsed cycles against cuBLAS's ~90 % / ~91 %: about 13-16 thousand cycles per
// tile beyond its 65.5 / 131 thousand of MMA, a cost fixed per tile (not per k), where the
// consumers store C from registers while the tensor cores idle, and every SM does so at once.
// Prediction: the per-tile cost to ~4 thousand cycles: 4096^3 bf16 from 0.88x to ~0.97x cuBLAS,
// 8192^3 from 0.96x to ~1.03x.
// Measured on the H100 (a5861b6, interleaved with cuBLAS): bf16 0.95 / 0.98 / 1.00x at 2048 /
// 4096 / 8192^3 (595 / 781 / 802 TFLOP/s; rung 15 0.78 / 0.88 / 0.96), f16 0.92 / 0.98 / 1.02x:
// the prediction held at 4096 and 8192, and 2048 (one wave, where no next tile hides anything)
// gained most, 22 %: the direct stores cost more than the overlap alone explains. tf32 with TMA
// rounding the operands (d7eea71): nt 1.00 / 1.01x at 4096 / 8192, nn (A^T from registers, C^T's
// tiles stored transposed) 1.01x with its fragments double-buffered (6ed86d7: one wgmma group in
// flight across stages; 0.96-0.98x without); rounding copies ran 0.63 / 0.77 / 0.88x. TMA stores
// over a ragged n wrote 7 to 3591 elements of C's ld padding (TMA's 16-byte column clipping), hence
// the direct stores for the last tile column; the GPU tests check the padding.
// The buffers are written with st.shared, not generic stores (8aa8a88): bf16 0.96 / 0.99 / 1.06x,
// f16 0.93 / 0.99 / 1.03x (within the runs' spread of the above). ncu's stall sampling at 4096^3
// (cac4f83): the consumers spend 59 % of all warp samples in the mainloop (wgmma issue and
// wgmma.wait: tensor-bound) and 4 % in the epilogue.
// The producer's tail: a stamped block at 2048^3 bf16 spent
// 2.1 thousand cycles after its stores completed at a kernel-end cluster barrier. The producer's
// tail takes that barrier's place (it waits until both blocks' consumers released every stage, as
// CUTLASS does; rungs 15, 17, 19, 21). Predicted 2048^3 bf16 ~0.028 ms; measured (7fac9f9, H100,
// cuBLAS interleaved, five runs; racecheck clean) bf16 2048^3 0.0284-0.0289 ms = 0.96-0.99x, f16
// 0.95-0.97x, 4096^3 0.99-1.00x, 8192^3 1.01-1.04x: as predicted at 2048, < 1 % at 4096. The block
// exits ~6 thousand cycles sooner (40062 against 46262 from its start). Not kept: the start barrier
// split into per-thread waits (8393812, 3048f46: 0.97x, but its non-.aligned waits hung racecheck);
// the start barrier in two .aligned halves with the tile walk between them (bf1d4ac): the walk's
// first kernel-parameter reads took ~2 thousand cycles, so the first load left only ~100 cycles
// sooner: no gain (0.0285 ms).
// Bounded by: the cooperative schedule (both consumers of a block finish a tile together, so the
// tensor cores wait while they fill their buffers: ~8 thousand cycles per tile at 4096^3 against
// cuBLAS's ~6), 3.88 tiles per block at 4096^3, and one wave's fill and drain at 2048.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::wgmma_tma_store {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_tma_store"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_tma_store"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_tma_store"); }

}  // namespace rungs::sgemm::wgmma_tma_store
