// Rung 20, wgmma_ragged: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) that keeps its speed on shapes that are not multiples of the tile; f16, bf16
// and tf32 as rung 17.
// Adds over 17 wgmma_tma_store, for the ragged edges of C:
//  * the last tile column multiplies only as wide as it is: a tile with at most 64 (128) columns
//    left issues wgmma m64n64 (m64n128) instead of m64n256 and loads only those columns of B;
//    a consumer whose 64 rows all lie past m multiplies only 64 columns wide and stores nothing
//    (with no MMAs at all it hung about once in 30 launches: see 20_wgmma_ragged.cuh and
//    scripts/experiments/hang_probe/hang_probe.sh). At 4096 x 4104 x 4096 (17 tile columns of 256, the last
//    8 wide) rung 17 runs 5 rounds of full tiles where 4096^3 runs 4 (0.219 ms against 0.176,
//    1.25x, where cuBLAS pays 1.05x); here that column costs about a quarter of a full one.
//  * C that TMA cannot store (rows not 16-byte aligned, or a last tile column that TMA would
//    clip only to 16 bytes, into the user's ld padding) does not go out from the registers with
//    scattered 2-byte stores while the tensor cores wait, as in rung 17: the consumer writes the
//    chunk into its shared buffer as for TMA and hands it over (an mbarrier pair) to one of the
//    producer warpgroup's three idle warps, which writes it a row at a time, 32 consecutive
//    elements per instruction, while the consumer starts its next tile. (beta != 0 keeps the
//    direct stores: the buffer holds C's type, and rounding alpha * AB to it before adding
//    beta * C would round twice.)
// Unaligned A or B are copied aligned first, as in rung 15.
// Prediction (bf16, H100, rung 17 measured 0.219 / 0.301 / 0.328 ms):
// 4096 x 4104 x 4096 ~0.185 ms (the 17th column a quarter of a round), 4096 x 4097 x 4096 ~0.22
// (C's 2-byte scattered stores, ~0.06 ms, hidden; B's copy ~0.02 stays), 4095 x 4097 x 4093 ~0.25
// (A's copy too): 1.4x the 4096^3 time, short of the 1.1x of issue 5's bar (that needs the copies
// gone). Square multiples of 256: the same as rung 17 (the same kernel, one more branch per tile).
// The storer branch must not take warp 0's lanes 1-31 (as consumer -1 they hung the kernel where C
// is staged; ee217e8). Every writer and reader of the hand-over arrives on its mbarrier itself, so
// racecheck can follow it; the sanitizers are clean.
// Measured (H100), bf16 at 0577b80 (rung 17 / cuBLAS in the same run): 4096 x 4104 x 4096
// 0.204 ms (0.220 / 0.181), 4096 x 4097 x 4096 0.246 (0.302 / 1.091), 4095 x 4097 x 4093 0.275 (0.330
// / 0.870; f16 0.281, tf32 0.522 against 0.563): ~10 % over each prediction, 1.16 / 1.40 / 1.57x its
// own 4096^3 (0.1755, 1 % behind rung 17's 0.1741 there). `auto` takes it for large tf32 problems
// with unaligned rows and for tf32 tn (gemm/tuning.cpp). Bounded by: the copies of unaligned A and
// B (~0.02 ms each at 4096), the narrow last column still a full round of the other tiles' length
// (0.029 ms at 4104 for 8 columns), and on aligned ragged shapes cuBLAS (1.05x its 4096^3 at 4104
// against our 1.16x).
#include "gemm/20_wgmma_ragged.cuh"

namespace rungs::sgemm::wgmma_ragged {

using Parts = ws::Parts<ws::RoundRobin, ws::Ragged, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_ragged"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_ragged"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_ragged"); }

}  // namespace rungs::sgemm::wgmma_ragged
