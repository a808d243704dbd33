// Rung 28, wgmma_fp8: fp8 operands (e4m3 or e5m2 each, all four pairs) on rung 17's structure
// (warp-specialized, persistent, clusters of 2 multicasting B, TMA-store epilogue; sm_90a), bf16 or
// float C, Scaling::tensor and Scaling::outer.
// Adds over 17 wgmma_tma_store: the fp8 instruction, wgmma.mma_async.m64n256k32.f32.{e4m3,e5m2}.
// {e4m3,e5m2} (detail::wgmma_256_fp8, chosen per stage by ws::mma_stage), summed in the wgmma's fp32
// accumulator over all of k (not promoted: see below). The frame is unchanged otherwise: a stage
// is still one 128-byte row of k per row of A and B, now 128 fp8 elements (4 MMAs of k32 per
// consumer where bf16 issues 4 of k16), so the 128 x 256 tile, 4 stages of 48 KB and the 128-byte
// swizzle are rung 17's, and each stage carries twice the k. The scales that do not depend on k
// are applied to the accumulator in the epilogue, before rung 17's stores (ws::scale_acc_fp8):
// tensor C = alpha a[0] b[0] acc + beta C, outer C(i, j) = alpha a[i] b[j] acc(i, j) + beta C (a
// thread reads the scales of its 2 rows and 64 columns, once per tile). wgmma reads 8-bit operands K-major only: A stored k x m (ta = T), B
// stored k x n (tb = N), and operands TMA cannot address (base or ld not a multiple of 16 bytes)
// are copied once per call into aligned k-major scratch (pack::operands_fp8, a byte transpose):
// nt (ta = N, tb = T), cuBLASLt's only fp8 form, runs in place.
// block128 scales change every 128 k: they need the partial sums taken out of the tensor core's
// accumulator per k block (promotion, rung 29) and are refused here with rungs::Unsupported.
// The accumulation is the tensor core's own over the whole k: the H100's fp8 wgmma adds its
// products with fewer mantissa bits than fp32 (DeepGEMM measures ~14), so the error grows with k
// faster than cuBLASLt's (which promotes); GemmFp8.ErrorAtLargeKBesideCublas prints it at k = 8192
// and 32768 beside cuBLASLt's and rung 29's.
// Bounded by: the same per-stage data rate as rung 17 (48 KB per 1024 tensor-core cycles: four
// m64n256k32 per consumer take as long as bf16's four m64n256k16 at twice the FLOP rate), so the
// mainloop of a tile takes half of bf16's time at the same k while the epilogue costs what it did
// (~8 thousand cycles per tile at 4096^3 on rung 17, the consumers filling their C buffers while
// the tensor cores wait): the epilogue's share doubles, ~20 % of a tile at k = 4096 (32 stages of
// 1024 cycles). And the clocks: sustained fp8 MMAs lower them (issue 36's cuBLASLt numbers).
// Prediction: ~0.85-0.95x cuBLASLt per-tensor (e4m3 -> bf16, nt) at 4096^3, ~0.9-1.0x at 8192^3,
// ~0.8x at 2048^3 (one wave: the fill and the epilogue exposed); the byte transposes of other
// layouts cost one read and write of the operand each.
// Measured (H100 SXM, 6b05a1d, `rungs bench gemm --size 2048,4096,8192 --dtype fp8 --trans nt
// --scaling tensor|outer`, interleaved with cuBLASLt): tensor 0.0205 / 0.0983 / 0.7366 ms, 836 / 1398
// / 1493 TFLOP/s, 1.00 / 1.05 / 1.04x cuBLASLt at 2048 / 4096 / 8192^3; outer 1.01 / 1.11 / 1.10x.
// Above the prediction: the epilogue's share is smaller than estimated. The price is accuracy:
// normwise error 1.9e-3 at k = 8192 and 4.5e-3 at 32768 (float C), 18x and 43x cuBLASLt's 1.0e-4
// on the same data: hence rung 29, and auto does not take this rung.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::wgmma_fp8 {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore>;

void run_fp8(const ArgsF8& a) {
  if (a.scales.kind == Scaling::block128)
    detail::unsupported("wgmma_fp8", "block128 scales need promotion (rung 29)");
  ws::run_fp8<Parts>(a, "wgmma_fp8");
}

}  // namespace rungs::sgemm::wgmma_fp8
