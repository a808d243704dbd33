// Rung 15, wgmma_ws: warp-specialized, persistent, clustered wgmma (sm_90a): f16, bf16 (any
// transpose) and tf32 (any transpose: TMA rounds the operands to tf32, an m/n-contiguous one is
// read through registers, and only tn copies A k-contiguous).
// Adds over 14 wgmma:
//  - warp specialization: a producer warpgroup (one thread issues every TMA, 40 registers after
//    setmaxnreg) and two consumer warpgroups (232 registers) that only wait on "full" barriers,
//    issue wgmma and release slots: no consumer ever waits for a refill on another's behalf;
//  - a persistent grid of as many clusters as fit at once (cudaOccupancyMaxActiveClusters), each
//    walking the 128 x 256 tiles in a banded order (8 cluster rows per band) so the tiles in flight
//    share A and B panels in L2; the producer loads the next tile while the consumers store this one;
//  - clusters of 2 blocks along m: the two tiles share their B panel, each block loads half of it
//    and multicasts it to both (48 KB per stage and block from L2 becomes 32 KB). A slot is free
//    when the consumers of both blocks released it (the "empty" barrier counts 4 arrivals).
//  - operands TMA cannot read in place (unaligned base or ld, and tn's A: tf32 wgmma reads one
//    m/n-contiguous operand only, from registers) are copied once per call into aligned
//    (transposed) scratch (gemm/pack.hpp): any shape and ld runs the fast path, at the price of one
//    read and write. tf32 nn runs as C^T = B^T A^T with a transposed epilogue (wgmma_ws.cuh).
// Bounded by: the epilogue (stores straight from registers, 4 bytes per lane, masked) does not
// overlap the tensor cores of its own block; one wave of tiles at 2048 (128 tiles on 132 SMs)
// is bound by the pipeline fill and the epilogue, not the MMA rate. ncu (85b5619,
// scripts/experiments/ncu_tc/ncu_tc.sh): the tensor pipe busy 76 % / 87 % of the time at 4096^3 /
// 8192^3 bf16, 13-19 thousand cycles per tile beyond its MMAs at either k: a per-tile cost, the
// epilogue. Rung 17 replaces it.
// Prediction: 0.95-1.05x cuBLAS at 4096-8192. Measured on the H100 (docs/gemm_tc.md): 0.77-0.78x
// at 2048, 0.88-0.89x at 4096, 0.96x at 8192 (f16, bf16): level with rung 14, not above it. A
// .release.cluster remote mbarrier arrive per k tile ran it at 0.43x (it stalled each consumer;
// the cta-scope release is 2.0x faster, 13c207f: see detail/sm90/sync.cuh). tf32 with TMA rounding
// the operands (d7eea71) 0.92 / 0.95 / 0.94x nn at 2048 / 4096 / 8192; rounding copies of A and B
// ran 0.77-0.87x. Unaligned 4095x4097x4093: 2.6x cuBLAS, 1.65x slower than 4096^3 (the copies,
// and 17 tile columns for n = 4097: 544 tiles, 5 rounds of 132 blocks instead of 4).
#include "gemm/15_wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_ws {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::DirectStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_ws"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_ws"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_ws"); }

}  // namespace rungs::sgemm::wgmma_ws
