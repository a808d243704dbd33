// Rung 19, wgmma_streamk: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) with a stream-K tail; f16, bf16 and tf32 as rung 17.
// Adds over 17 wgmma_tma_store: the tiles no longer come in whole waves. A persistent grid of G
// clusters (66 on the H100) runs T cluster tiles in ceil(T / G) rounds, the last one part-filled:
// at 4096^3 (256 cluster tiles of 2 x 128 x 256) 3.88 tiles' work takes 4 tiles' time, at 8192^3
// 15.52 takes 16. Here the first (floor(T / G) - 1) * G tiles run whole as in rung 17, and the k tiles
// of the rest (between G and 2G tiles) are cut into G equal contiguous ranges, one per cluster, so
// every cluster finishes at the same time. A tile cut between two clusters: the later part's
// cluster (for which it is the first piece of its range) stores its fp32 partial sum to a
// workspace slot and sets a flag (release); the cluster with the tile's first k tiles (the last
// piece of its range) waits for the flag (acquire), adds the partial and stores C as rung 17 does.
// Results do not depend on timing (each tile's parts are always added in the same order). The
// workspace (64 KB per consumer warpgroup, 16.5 MB on the H100) and flags come from the stream's
// scratch pool, per call. A cluster waits only for the next one, which delivers before it waits
// for anything, and the last never waits; so it needs the clusters resident together (the grid
// is sized to what fits). On a GPU shared with other kernels that leave only some clusters
// resident, a waiting cluster whose successor is not scheduled could stall (as any stream-K
// kernel); auto never picks this rung.
// Prediction: the rounds' loss goes (3 % of the time at 4096^3 and at
// 8192^3), less the partial sums' traffic (~2 thousand cycles each way per cut tile, against a
// tile's 65 / 131 thousand): 4096^3 bf16 from 0.99x to ~1.01x cuBLAS, 8192^3 +2-3 % (1.03-1.06x),
// 2048^3 unchanged (64 tiles fit in one round: stream-K is not used).
// Measured on the H100 (interleaved with cuBLAS): a miss. bf16 0.93 / 0.88-0.90 / 0.98-1.02x at
// 2048 / 4096 / 8192^3 (6f94199, a18c328; rung 17 beside it 0.93-0.94 / 0.98-0.99 / 1.01x), f16
// 0.91-0.92 / 0.88-0.91 / 1.02-1.03x, tf32 (6f94199) 0.62 / 0.58 / 0.85x against rung 17's 0.63 /
// 0.78 / 0.88x. Correct at every tested shape (GemmTc.StreamKTails cuts tiles), memcheck and
// racecheck clean.
// Why (ncu, 4096^3 bf16, 6f94199): DRAM reads 279 MB against rung 17's 149 MB, L2 hit rate 65.8 %
// against 75.1 %. In whole rounds every cluster is at the same k step of its tile, so the A and
// B panels of that step serve all of them from L2; the stream-K ranges start at 66 different k
// offsets, so the 48 % of the time spent in them at 4096^3 streams A and B (64 MB, more than the
// 50 MB L2) with little reuse, and tf32's doubled bytes lose most. What the rounds cost (3 %) is
// less than what that reuse was worth. At 8192^3 the split is 10 % of the time and it is level.
// Not used by auto. What might work: ranges that keep the clusters in k-step (each tile of the
// tail cut at the same k), at the price of more partial sums.
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_streamk {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }
void run_tf32(const Args& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }

}  // namespace rungs::sgemm::wgmma_streamk
