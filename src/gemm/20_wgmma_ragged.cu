// Rung 20, wgmma_ragged: rung 17 that keeps its speed on shapes that are not multiples of the tile
// (sm_90a); f16, bf16 and tf32 as rung 17; unaligned A or B copied aligned first, as in rung 15.
// Adds over 16 wgmma_narrow (its narrow tiles, Mainloop Ragged), for C's ragged edges: Epilogue
// Staged<TmaStore> (20_wgmma_ragged.cuh), rung 17's TMA stores where TMA can store C. C that TMA
// cannot store (rows not 16-byte aligned, or a last tile column TMA would clip into the ld padding)
// is not stored from registers while the tensor cores wait: the consumer fills its shared buffer as
// for TMA and hands it (an mbarrier pair) to one of the producer warpgroup's three idle warps, which
// writes it a row at a time, 32 consecutive elements per instruction, while the consumer starts its
// next tile. beta != 0 keeps the direct stores: the buffer holds C's type, and rounding alpha AB to it
// before adding beta C rounds twice. At 4096 x 4104 x 4096 rung 17 runs 5 rounds of full tiles where
// 4096^3 runs 4 (1.25x its time; cuBLAS 1.05x).
// Bounded by: the copies of unaligned A and B (~0.02 ms each at 4096); the narrow last column, ~0.66
// of a full tile's time (its A loads), still a round beside the full tiles. `auto` takes it for tf32
// tn and for large tf32 products with unaligned rows (gemm/tuning.cpp).
// Prediction (bf16, H100): 4096 x 4104 x 4096 ~0.185 ms, 4096 x 4097 x 4096 ~0.22, 4095 x 4097 x 4093
// ~0.25; measured: 0.204 / 0.246 / 0.275 ms (rung 17 0.220 / 0.302 / 0.330): ~10 % over each.
#include "gemm/20_wgmma_ragged.cuh"

namespace rungs::sgemm::wgmma_ragged {

using Parts = ws::Parts<ws::RoundRobin, ws::Ragged, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_ragged"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_ragged"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_ragged"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_ragged
