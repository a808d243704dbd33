// Rung 24, wgmma_st_global: rung 17 (warp-specialized, persistent, clustered wgmma, sm_90a) whose C
// leaves through shared memory and coalesced 16-byte st.global instead of TMA stores; f16, bf16 and tf32
// as rung 17 (tf32 nn, stored transposed, keeps rung 17's TMA stores).
// Adds over 17 wgmma_tma_store: the same fill of each consumer's 16 KB buffer, a chunk of two 64 x 128-byte
// boxes at a time, then each thread reads 16-byte pieces back and writes them to C, a warp two rows of
// 256 bytes per instruction (detail::store_acc_64xn_stg). The SM's TMA unit is left to the operand loads.
// Why (seventeenth session, scripts/experiments/ws_timeline.cu at 4096^3 bf16, H100): a tile change costs
// ~3.3 thousand cycles with the tensor cores idle, ~2.6-2.9 of them C's epilogue; stamped box by box, each
// 8 KB TMA store takes ~0.5 thousand cycles to read its buffer (both consumers storing, the producer's
// loads of the next tile queued beside them: ~32 B per cycle per SM), and rung 21, which issued those
// stores under the next tile's MMAs, lengthened that tile's MMAs by ~2 thousand cycles: 64 KB at that
// rate. The TMA unit is near its limit with the operands alone (32 KB of boxes issued per 1024-cycle k
// tile); st.global takes the LSU and L1's path to L2 instead, and the warps only wait for their reads of
// shared memory.
// Prediction (before its first run): the epilogue from ~2.8 to ~1.2 thousand cycles a tile (the fill,
// 16 LDS.128 and 16 STG.128 a thread, four warpgroup barriers); 4096^3 bf16 ~2.5 % faster than rung 17
// (0.99 -> ~1.01x cuBLAS), 2048^3 ~3 % (its one tile's epilogue is at the end), 8192^3 ~1 %; a miss if the
// stores' L2 writes (64 KB per block at once, every SM together) stall the warps as long as TMA did.
// Bound now: as rung 17, the MMAs of 3.88 tiles per block at 4096^3 and the start (~6 thousand cycles).
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_st_global {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, false, false, false, false, true>(a, "wgmma_st_global"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, false, false, false, false, true>(a, "wgmma_st_global"); }
void run_tf32(const Args& a) { ws_kernel::run_any<true, false, false, false, false, true>(a, "wgmma_st_global"); }

}  // namespace rungs::sgemm::wgmma_st_global
