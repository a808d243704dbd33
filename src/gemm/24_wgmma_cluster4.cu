// Rung 24, wgmma_cluster4: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) with clusters of four blocks along m instead of two; f16, bf16 and tf32 as rung 17.
// Adds over 17 wgmma_tma_store: B's k tile (256 columns x 128 bytes) is loaded once per cluster of
// four and multicast to all four blocks, each block issuing a quarter (one 64-column box), so a block
// takes 16 KB of A and 8 KB of B from L2 per k tile instead of 16 + 16 (rung 17) or 16 + 32 (no
// cluster): a quarter less L2-to-SM traffic.
// Why: at 2048^3 bf16 every block runs one 128 x 256 tile, 32 k tiles, in 0.029 ms where its MMAs
// take ~0.019 (at ~1.75 GHz); with 128 blocks each pulling 32 KB per k tile, the SMs draw ~4 MB
// from L2 per k tile, ~7 TB/s at the MMAs' pace, beyond what the H100's L2 is measured to deliver
// (5.5-7 TB/s). Clusters of one measured 0.73-0.82x cuBLAS against clusters of two's 0.77-0.96x
// (first session), so the traffic matters. Costs: four blocks must release a stage before any
// reloads it (the slowest of four gates the others), and clusters of four must fit in a GPC; if 32
// fit (128 blocks), 2048^3's 128 tiles are still one round and 4096^3's 512 four, as for rung 17.
// Predicted (bf16, H100): 2048^3 from 0.0291 ms to 0.027-0.028 (0.98-1.0x cuBLAS), 4096^3 +1-3 %
// (0.175 ms), 8192^3 level. A miss would say the L2's bandwidth does not bind.
// Bound now: to be measured.
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_cluster4 {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, false, false, false, false, 4>(a, "wgmma_cluster4"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, false, false, false, false, 4>(a, "wgmma_cluster4"); }
void run_tf32(const Args& a) { ws_kernel::run_any<true, false, false, false, false, 4>(a, "wgmma_cluster4"); }

}  // namespace rungs::sgemm::wgmma_cluster4
