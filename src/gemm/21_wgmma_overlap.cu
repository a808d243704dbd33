// Rung 21, wgmma_overlap: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) whose epilogue runs under the next tile's MMAs; f16 and bf16.
// Adds over 17 wgmma_tma_store: after a tile's last MMA each consumer only converts its 64 x 256
// accumulator to C's 16-bit type in registers (alpha applied, 64 words: detail::pack_acc) and goes
// straight on to the next tile. The shared-memory fill and the TMA stores of those words happen
// inside the next tile's mainloop, one 64 x 128 chunk after issuing the MMAs of each of its first
// two k tiles, while the tensor cores work on them (after the last tile, at the end). Rung 17's two
// consumers finish a tile together, so in its epilogue (two fills of 16 KB, each behind the
// previous chunk's TMA read of the buffer) the tensor cores have nothing to do.
// Why: ncu's stall sampling of rung 17 at 4096^3 bf16 (cac4f83, docs/gemm_tc.md): 59 % of all warp
// samples in the consumers' mainloop and 4 % in their epilogue, i.e. ~6 % of a consumer's time with
// no MMAs in flight; rung 17 is 0.98-0.99x cuBLAS there, 0.94-0.96x at 2048^3, level at 8192^3.
// Cost: 64 more registers per consumer thread while the MMAs run (d[128] + 64 words, within the
// 232 of setmaxnreg; no spills), and the fill's shared-memory writes beside the wgmma operand
// reads (rung 17's busiest unit is the shared-memory pipe, 88 % at 4096^3): +32 KB per tile against
// ~3 MB of operand traffic. tf32 (fp32 C, 128 words) does not fit beside the accumulators: rung 21
// does f16 and bf16 only.
// Prediction (H100, bf16): 4096^3 from 0.98-0.99x to 1.02-1.04x cuBLAS (3.88 tiles per block,
// each losing ~2-3 % of its MMA time to rung 17's epilogue); 8192^3 +1-2 %
// (twice the MMAs per tile); 2048^3 unchanged (one tile per block: nothing to hide it under).
// Measured (H100, 67889a9, same run as rung 17): a miss. Correct (50 GemmTc tests with rung
// 20's, memcheck and racecheck clean), but no faster: bf16 0.0296 / 0.1775 / 1.366 ms at
// 2048 / 4096 / 8192^3 against rung 17's 0.0291 / 0.1762 / 1.356, f16 0.0305 / 0.1806 / 1.479 against
// 0.0298 / 0.1797 / 1.417 (0.3-1 % slower; 8192 f16 within that row's 9 % spread).
// ncu (4096^3 bf16, one launch each, a897517): 290,402 elapsed cycles per SM for rung 17 and
// 291,824 for rung 21; the busiest pipe of both is the one ncu calls "Shared" (88.1 % / 87.7 %), which
// it says executes FP64 and tensor operations and is dominated by its tensor sub-pipeline: the tensor
// cores are busy 88 % of the time in both. The MMA work is 254 thousand cycles per SM on average (512
// tiles of 65.5 thousand over 132 SMs) and 262 thousand on the SMs that run 4 tiles, so ~28 thousand
// cycles per SM (~7 thousand per tile) are not MMAs, and taking the epilogue off the tensor cores'
// path left them where they were: they are not the epilogue (whose stall samples overlapped MMAs
// still in flight). Per-tile stamps (scripts/experiments/ws_timeline.cu, 4096^3 bf16, 2cf886a,
// docs/gemm_tc.md): rung 17's tile change costs ~3.2 thousand cycles, ~2.6 of them C's epilogue;
// here a tile change takes ~2.0 thousand, but each tile's MMAs take 66.5-67.7 thousand cycles
// against rung 17's ~65.0: the fill and stores beside the MMAs slow them by as much as they save.
// Kept on the ladder as the measured miss; `auto` never picks it.
// Bounded by: as rung 17, the tensor pipe at 88 % of elapsed cycles; C's epilogue, on or beside the
// MMAs' path, ~2.5 thousand cycles a tile.
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_overlap {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, false, false, true>(a, "wgmma_overlap"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, false, false, true>(a, "wgmma_overlap"); }

}  // namespace rungs::sgemm::wgmma_overlap
