// Rung 35, wgmma_sums: rung 15 whose sums over k are rounded to nearest in fp32, not truncated on the
// tensor core (sm_90a); f16, bf16 and tf32 as rung 15.
// Adds over 15 wgmma_ws: Accumulation SumPerStage (35_wgmma_sums.cuh). Each stage's MMAs sum into a
// fresh accumulator t on the tensor core, which is waited for, the stage released, and added to the
// fp32 sums d with round-to-nearest adds. The tensor core's accumulation truncates each add (up to an
// ulp of the running sum, always toward zero), so a sum over all of k on it drifts; here a stage's
// 32 (tf32) or 64 (16-bit) products are summed there and the k / 32 or k / 64 stage sums off it. t
// beside d needs 64 more registers a thread, so tiles are 128 x 128 (WholeTilesOf<128, 6>: 6 stages
// of 32 KB). This is the accumulation 3xTF32 needs (rungs 36 and 37): its error budget is fp32's.
// Bounded by: each consumer's wait for its own stage's MMAs before the adds (the other consumer's
// MMAs cover part of it); rung 15's direct stores; 128-column tiles (B's bytes per multiply-add
// double against rung 15's 256).
// Prediction (H200): 16-bit and tf32 0.6-0.8x rung 15's speed at 4096^3; on all-positive data at
// large k (the bias adds up there), its error well under rung 15's.
#include "gemm/35_wgmma_sums.cuh"

namespace rungs::sgemm::wgmma_sums {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTilesOf<128, 6>, ws::DirectStore, ws::SumPerStage>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_sums"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_sums"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_sums"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_sums
