// Rung 28, wgmma_fp8: fp8 operands (e4m3 or e5m2 each, all four pairs), bf16 or float C,
// Scaling::tensor and outer, on rung 17's frame (warp-specialized, persistent, clusters of 2
// multicasting B, TMA-store epilogue; sm_90a). wgmma reads 8-bit operands K-major only: A stored k x m
// (ta = T), B stored k x n (tb = N) and operands TMA cannot address are copied once per call into
// aligned K-major scratch (pack::operands_fp8, a byte transpose); nt, cuBLASLt's only fp8 form, runs
// in place. block128 (scales that change every 128 k need rung 29's promotion): rungs::Unsupported.
// Adds over 17 wgmma_tma_store: in the Mainloop, the fp8 instruction wgmma.m64n256k32 (e4m3 / e5m2
// pairs; detail::wgmma_256_fp8, chosen per stage by ws::mma_stage), summed in the tensor core's
// accumulator over all of k. A stage is still one 128-byte swizzle row per row of A and B, now 128 fp8
// of k, so rung 17's 128 x 256 tile, 4 stages of 48 KB and swizzle stay and a stage carries twice the
// k. In the Epilogue, the k-independent scales multiply the accumulator before rung 17's stores
// (scale_acc_fp8): tensor C = alpha a[0] b[0] acc + beta C, outer C(i, j) = alpha a[i] b[j]
// acc(i, j) + beta C (a thread reads its 2 rows' and 64 columns' scales once per tile): the
// Accumulation ScaledInTensorCore (28_wgmma_fp8.cuh), rung 17's InTensorCore and these scales.
// The tensor core adds fp8 products with fewer mantissa bits than fp32 (~14, DeepGEMM measures), so
// the error grows with k faster than cuBLASLt's, which promotes (GemmFp8.ErrorAtLargeKBesideCublas).
// Bounded by: rung 17's data rate per stage, so the mainloop takes half of bf16's time at the same k
// while the epilogue costs what it did (its share doubles, ~20 % of a tile at k = 4096); the clocks,
// which sustained fp8 MMAs lower.
// Prediction: ~0.85-0.95x cuBLASLt per-tensor at 4096^3; measured: 1.05x (1.04x at 8192^3, H100), but
// 18x cuBLASLt's normwise error at k = 8192: auto does not take it (rung 29 promotes).
#include "gemm/17_wgmma_tma_store.cuh"
#include "gemm/28_wgmma_fp8.cuh"

namespace rungs::sgemm::wgmma_fp8 {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::ScaledInTensorCore>;

void run_fp8(const ArgsF8& a) {
  if (a.scales.kind == Scaling::block128)
    detail::unsupported("wgmma_fp8", "block128 scales need promotion (rung 29)");
  ws::run_fp8<Parts>(a, "wgmma_fp8");
}

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_fp8
