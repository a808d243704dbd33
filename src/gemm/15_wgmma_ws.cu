// Rung 15, wgmma_ws: warp-specialized, persistent, clustered wgmma (sm_90a): f16, bf16 and tf32, any
// transpose; operands TMA cannot read in place (unaligned base or ld, and tf32 tn's A) are copied
// once per call into aligned scratch (gemm/pack.hpp).
// Adds over 14 wgmma: the Schedule RoundRobin (15_wgmma_ws.cuh, with ws/cooperative.cuh's roles);
// rung 14's other parts are rung 15's own, defined beside it (Mainloop WholeTiles, Epilogue
// DirectStore, Accumulation InTensorCore), clusters of 2 multicasting B included.
//  - a producer warpgroup (one thread issues every TMA; 40 registers after setmaxnreg) and two
//    consumer warpgroups (232) that only wait on "full", issue wgmma and release slots: no consumer
//    waits for a refill on another's behalf;
//  - a persistent grid of as many clusters as fit, walking the 128 x 256 tiles in bands of 8
//    cluster rows so the tiles in flight share A and B panels in L2; the producer loads the next
//    tile while the consumers store this one. tf32: TMA rounds the operands; an m/n-contiguous one
//    is read through registers, nn runs as C^T = B^T A^T with a transposed epilogue.
// Bounded by: the epilogue, stored from registers while the tensor cores idle: 13-19 thousand cycles
// a tile at any k (tensor pipe 76 % of elapsed at 4096^3 bf16, cuBLAS ~90 %; H100). Rung 17 replaces it.
// Prediction: 0.95-1.05x cuBLAS at 4096-8192^3; measured: 0.77-0.78 / 0.88-0.89 / 0.96x at 2048 /
// 4096 / 8192^3 (f16, bf16; H100): level with rung 14, a miss kept as the frame's base.
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/ws/fused.cuh"

namespace rungs::sgemm::wgmma_ws {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::DirectStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_ws"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_ws"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_ws"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

// Epilogues: the same schedule and mainloop with the fused epilogue (ws/fused.cuh).
void run_epi(const EpiCall& c) {
  ws::run_fused<ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::Fused>,
                ws::Parts<ws::RoundRobin, ws::HalvesOf<ws::WholeTiles>, ws::Fused>>(c, "wgmma_ws");
}

}  // namespace rungs::sgemm::wgmma_ws
