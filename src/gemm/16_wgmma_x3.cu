// Rung 16, wgmma_x3: 3xTF32 (float inputs, Math::tf32x3) on rung 15's structure (sm_90a): fp32-level
// accuracy from tf32 tensor cores.
// Adds over 15 wgmma_ws: each operand split once per call into a tf32 big part and a tf32 small
// part (x = hi + lo + O(2^-22 |x|); gemm/pack.cu split_operands, k-contiguous, both parts in
// scratch), and three products per k step, hi*lo + lo*hi + hi*hi (lo*lo, ~2^-22 relative, left
// out). The tensor core's fp32 accumulation truncates (round toward zero: docs/gemm_tc.md,
// "3xTF32"), so a sum over all of k on the tensor core is biased: each stage (32 of k) is
// summed apart on the tensor core (the first wgmma of the stage starts a fresh accumulator), the
// small products first, and reaches the fp32 accumulator through an ordinary round-to-nearest add.
// Tiles 128 x 128 (each consumer 64 x 128: 64 accumulator registers and 64 for the stage sum),
// 3 stages of four 16 KB operand tiles (A hi, A lo, B hi, B lo), clusters of 2 multicasting B.
// Bounded by: the three products, the tensor-core work (the tf32 peak / 3 = ~165 TFLOP/s on the
// H100); each consumer waits for its stage's products before the add, so the two consumers must
// cover each other's waits; the split copies read A and B and write twice their size.
// Prediction: 95-120 TFLOP/s at 4096-8192 (about a third of rung 15's tf32 300-330), error at or
// below cuBLAS sgemm's: a stage sums 12 truncating k8 products whose partial sums average ~0.6 of
// the stage's, so on positive data the bias is ~12 * 0.6 * 2^-24 / 2 = 2-3e-7 of the result
// (coherent over stages), where the wmma fix (one truncation per k8 for hi*hi) measured 5e-7 in
// the CPU model.
// Measured on the H100 (a5861b6, docs/gemm_tc.md): correct (every GemmTc test, memcheck and
// racecheck clean). 4096^3: 104.8 TFLOP/s = 2.03x cuBLAS sgemm (51.7), error 3.1e-7
// against sgemm's 1.15e-6; 8192^3: 90-96 TFLOP/s (1.79x; min 10.4 ms = 106), error 3.7e-7 vs
// 1.62e-6; 2048 x 2048 x 4096 (GemmAccuracy): 3.1e-7 zero-mean, 2.6e-7 positive data (sgemm 1.1e-6,
// 8.5e-7). At 8192 ncu shows it DRAM-bound: 33 GB read for 1 GB of split operands (L2 hit rate
// 41 %, DRAM 84 % busy): the hi and lo copies double the bytes of every panel, and the tiles in
// flight, drifting apart in k, do not share them in L2. Rung 22 (wgmma_x3_rs) reads A's fp32 once
// and splits it in registers: 122 / 126 TFLOP/s at 4096 / 8192^3.
// Its parts (the X3 mainloop with the A part SplitCopies, SumPerStage) are in wgmma_x3.cuh, on the
// warp-specialized frame (wgmma_ws.cuh); rung 22 replaces the A part.
#include "gemm/wgmma_x3.cuh"

namespace rungs::sgemm::wgmma_x3 {

void run_tf32x3(const Args& a) { x3_kernel::run<x3_kernel::SplitCopies>(a, "wgmma_x3"); }

}  // namespace rungs::sgemm::wgmma_x3
