// Rung 17, wgmma_tma_store: rung 15 with C through shared memory and TMA stores (sm_90a); f16, bf16
// and tf32 as rung 15. beta != 0, or a C whose base or rows are not 16-byte aligned, takes rung 15's
// direct stores.
// Adds over 15 wgmma_ws: Epilogue TmaStore (17_wgmma_tma_store.cuh). Each consumer writes its 64 x 256
// accumulator (alpha applied, in C's type) into its own 16 KB buffer in the 128-byte swizzle, and one
// thread sends it with TMA box stores; the consumers go straight on to the next tile while the stores
// drain, whole 128-byte rows where rung 15 wrote 16 bytes a row per warp instruction. TMA clips at n
// only to 16 bytes (into the user's ld padding): where C's row bytes are not a multiple of 16, the
// last tile column stores directly. Shared memory: 4 stages of 48 KB + 2 x 16 KB = 224 KB.
// The producer's tail replaces a kernel-end cluster barrier: it waits until both blocks' consumers
// released every stage, as CUTLASS does (the barrier held a block ~2 thousand cycles at 2048^3).
// Why: rung 15's tensor pipe was busy 76 % / 87 % of the time at 4096^3 / 8192^3 (cuBLAS ~90 %): 13-16
// thousand cycles a tile beyond its MMAs, the consumers storing C while the tensor cores idle.
// Bounded by: the cooperative schedule: both consumers finish a tile together, so each tile change
// idles the tensor cores ~3.2 thousand cycles (~2.6 of them the epilogue; docs/gemm_tc.md, "Where rung
// 17 stands"); 3.88 tiles per block at 4096^3, one wave's fill and drain at 2048^3.
// Prediction: the per-tile cost to ~4 thousand cycles, bf16 0.88x -> ~0.97x cuBLAS at 4096^3, ~1.03x
// at 8192^3; measured: bf16 0.96-0.99 / 0.99-1.00 / 1.01-1.04x at 2048 / 4096 / 8192^3 (H100): held.
#include "gemm/17_wgmma_tma_store.cuh"
#include "gemm/ws/fused.cuh"

namespace rungs::sgemm::wgmma_tma_store {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_tma_store"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_tma_store"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_tma_store"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

// Epilogues: rung 15's fused epilogue with C through the TMA stores (ws/fused.cuh, FusedTmaStore).
void run_epi(const EpiCall& c) {
  ws::run_fused<ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::FusedTmaStore>,
                ws::Parts<ws::RoundRobin, ws::HalvesOf<ws::WholeTiles>, ws::FusedTmaStore>>(c, "wgmma_tma_store");
}

}  // namespace rungs::sgemm::wgmma_tma_store
