// Rung 29, wgmma_fp8_promote: rung 28 with two-level accumulation: the tensor core's partial sums
// taken out every k tile (128 k) and added into fp32 registers, where the block128 scales apply; fp8
// (any e4m3 / e5m2 pair), bf16 or float C, all three scalings, any transpose (copies as rung 28).
// Adds over 28 wgmma_fp8: the Accumulation part Promote (29_wgmma_fp8_promote.cuh), the consumers'
// k loop. A consumer keeps its 64 x 256 sums in 128 fp32 registers (the frame's d) and multiplies a
// k tile in two 128-column halves, each four wgmma.m64n128k32 into a 64-register partial sum started
// from zero, waited for and added: d += s * partial. Halves, because a 64 x 256 partial sum beside d
// would need 256 registers of the 232 a consumer has. A half is one 128-column block of B (tiles
// start at multiples of 256), so s is one number per row: block128 s = a[row][kt] * b[n0 / 128 +
// half][kt], loaded one k tile ahead (5-7 % faster than before the stage's wait); tensor and outer
// s = 1, scaled in the epilogue as in rung 28. The stage is released after its second half.
// PROMOTE_EVERY = 1 k tile: block128's scales change every 128 k (a k tile is one 128-byte swizzle
// row, never two blocks), and it is the interval the fp8 tolerance assumes for every scaling (at most
// 128 products in the tensor core's ~14-bit sums; DeepGEMM's and DeepSeek-V3's 4 wgmma k32).
// Bounded by: each consumer waits for its own MMAs twice per k tile and adds on the CUDA cores before
// issuing more; the other's MMAs fill the tensor core only when the two are out of step. Not shared
// memory: the n128 halves read A twice (~94 against ~78 bytes per tensor-core cycle, of 128), yet
// rung 28 in such halves keeps its speed (docs/fp8.md, "What holds the promotion").
// Prediction: ~0.75-0.9x rung 28's speed, cuBLASLt's error; measured: 0.83 / 0.80x at 4096^3 / 8192^3
// (0.87 / 0.83x cuBLASLt per-tensor, H100), normwise error cuBLASLt's (1.05e-4 at k = 8192).
#include "gemm/29_wgmma_fp8_promote.cuh"

namespace rungs::sgemm::wgmma_fp8_promote {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::Promote>;

void run_fp8(const ArgsF8& a) { ws::run_fp8<Parts>(a, "wgmma_fp8_promote"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_fp8_promote
