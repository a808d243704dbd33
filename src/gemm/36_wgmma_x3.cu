// Rung 36, wgmma_x3: 3xTF32 (float inputs, Math::tf32x3) on the warp-specialized frame (sm_90a):
// fp32-level accuracy from tf32 tensor cores; both operands split by a copy (gemm/pack.cu).
// Adds over 35 wgmma_sums: Mainloop X3<SplitCopies> (36_wgmma_x3.cuh), on rung 35's per-stage sums.
// Each operand is split once per call into tf32 big and small parts (x = hi + lo + O(2^-22 |x|),
// k-contiguous, in scratch), and each k step runs three products, hi*lo + lo*hi + hi*hi (lo*lo left
// out). The tensor core's fp32 accumulation truncates, so a sum over all of k on it is biased: each
// 32-deep stage is summed apart on the tensor core (a fresh accumulator), small products first, and
// added to the fp32 accumulator with a round-to-nearest add. 128 x 128 tiles (64 accumulator
// registers per consumer and 64 for the stage sum), 3 stages of four 16 KB parts (A hi, A lo, B hi,
// B lo), B multicast over clusters of 2.
// Bounded by: the three products (the tf32 peak / 3, ~165 TFLOP/s on the H100); at 8192^3 DRAM: the
// split copies double every panel's bytes and the tiles in flight, drifting apart in k, do not share
// them in L2 (33 GB read for 1 GB of split operands). Rung 37 reads A once and splits it in registers.
// Prediction: 95-120 TFLOP/s at 4096-8192^3, error at or below cuBLAS sgemm's (a stage's truncation
// bias ~2-3e-7); measured: 105 TFLOP/s at 4096^3 (2.03x sgemm), 90-96 at 8192^3, error 3.1e-7 against
// sgemm's 1.15e-6 (H100).
#include "gemm/36_wgmma_x3.cuh"

namespace rungs::sgemm::wgmma_x3 {

void run_tf32x3(const Args& a) { x3_kernel::run<x3_kernel::SplitCopies>(a, "wgmma_x3"); }

std::vector<std::string> parts() { return ws::part_names<x3_kernel::Parts<x3_kernel::SplitCopies>>(); }

}  // namespace rungs::sgemm::wgmma_x3
