// Rung 19, wgmma_streamk: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) with a stream-K tail; f16, bf16 and tf32 as rung 17.
// Adds over 17 wgmma_tma_store: the tiles no longer come in whole waves. A persistent grid of G
// clusters (66 on the H100) runs T cluster tiles in ceil(T / G) rounds, the last one part-filled:
// at 4096^3 (256 cluster tiles of 2 x 128 x 256) 3.88 tiles' work takes 4 tiles' time, at 8192^3
// 15.52 takes 16. Here the first (floor(T / G) - 1) * G tiles run whole as before, and the k tiles
// of the rest (between G and 2G tiles) are cut into G equal contiguous ranges, one per cluster, so
// every cluster finishes at the same time. A tile cut between two clusters: the later part's
// cluster (for which it is the first piece of its range) stores its fp32 partial sum to a
// workspace slot and sets a flag (release); the cluster with the tile's first k tiles (the last
// piece of its range) waits for the flag (acquire), adds the partial and stores C as rung 17 does.
// Results do not depend on timing (each tile's parts are always added in the same order). The
// workspace (64 KB per consumer warpgroup, 16.5 MB on the H100) and flags come from the stream's
// scratch pool, per call. Needs all G clusters resident at once (the grid is sized so); a GPU
// shared with other work can delay, not break, it (the last cluster never waits).
// Prediction (before its first run): the rounds' loss goes (3 % of the time at 4096^3 and at
// 8192^3), less the partial sums' traffic (~2 thousand cycles each way per cut tile, against a
// tile's 65 / 131 thousand): 4096^3 bf16 from 0.99x to ~1.01x cuBLAS, 8192^3 +2-3 % (1.03-1.06x),
// 2048^3 unchanged (64 tiles fit in one round: stream-K is not used).
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_streamk {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }
void run_tf32(const Args& a) { ws_kernel::run_any<true, true>(a, "wgmma_streamk"); }

}  // namespace rungs::sgemm::wgmma_streamk
