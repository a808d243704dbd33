// Rung 29, wgmma_fp8_promote: rung 28 with two-level accumulation: the tensor core's partial sums
// taken out of the wgmma accumulator every k tile (128 k) and added into fp32 registers, where the
// block128 scales are applied; fp8 (e4m3 / e5m2, any pair), bf16 or float C, all three scalings.
// Adds over 28 wgmma_fp8: the Accumulation part Promote (below), the consumer's k loop for it. Each
// consumer keeps its 64 x 256 sums in 128 fp32 registers (the frame's d) and multiplies a k tile
// in two halves of 128 columns, each four wgmma.m64n128k32 into a 64-register partial sum started
// from zero (scale-d = 0), waited for and added into d: d += s * partial. The halves are what fit:
// a 64 x 256 partial sum beside the 64 x 256 sums would need 256 registers of the 232 a consumer
// has. A half of the tile's columns is one 128-column block of B (tiles start at multiples of
// 256), so s is one number per row: block128 s = a[row][kt] * b[n0 / 128 + half][kt] (two rows
// per thread, four scales per k tile, loaded one k tile ahead); tensor and outer s = 1,
// their scales applied at the end as in rung 28. The stage's slot is released after its second
// half has retired. PROMOTE_EVERY (= 1 k tile): the interval is fixed by block128 (its scales
// change every 128 k, and a k tile never straddles two blocks: 128 fp8 of k are one 128-byte
// swizzle row); it is also the interval the fp8 tolerance assumes (check/gemm_check.cpp: at
// most 128 products summed in the tensor core's ~14-bit accumulation, DeepGEMM's and DeepSeek-V3's
// interval of 4 wgmma k32) for tensor and outer.
// Bounded by: each consumer waits for its own MMAs twice per k tile (wgmma.wait_group 0) and adds
// 64 products on the CUDA cores before issuing the next; the other consumer's MMAs fill the tensor
// core meanwhile only when the two are out of step. The n128 MMAs read A twice per k tile: 48 KB
// of shared memory per consumer and k tile where rung 28's n256 read 40 KB (~94 against ~78 bytes
// per tensor-core cycle, under the 128 shared memory delivers; measured not to cost: rung 28 with
// its MMAs as two such halves keeps its speed, and A read once from registers gains nothing,
// scripts/experiments/fp8_promote_probes.sh). The block128 scales are L1/L2 hits, loaded a k tile
// ahead so that their latency is not on the path between two k tiles' MMAs (block128 5-7 % faster
// at 4096^3 / 8192^3 than loaded before the stage's wait, H100).
// Prediction: ~0.75-0.9x rung 28's time at 4096^3 and 8192^3 for every scaling (the promotion costs
// the same for all three); normwise error at k = 8192 within 1.5x cuBLASLt's (which promotes too),
// where rung 28's grows with k.
// Measured (H100 SXM, 6b05a1d, as rung 28): tensor 0.0220 / 0.1190 / 0.9232 ms at 2048 / 4096 /
// 8192^3 (780 / 1155 / 1191 TFLOP/s, 0.93 / 0.87 / 0.83x cuBLASLt; 0.93 / 0.83 / 0.80x rung 28's
// speed), outer 0.89 / 0.87 / 0.81x cuBLASLt, block128 1.09 / 0.89 / 0.86x cuBLASLt's block128
// (718 / 1017 / 1112 TFLOP/s). Normwise error 1.05e-4 at k = 8192 and 1.04e-4 at 32768, equal to
// cuBLASLt's to three digits. Bound as written above: the two waits per k tile leave the tensor
// core idle while a consumer adds; overlapping the promotion with the other consumer's MMAs (as
// DeepGEMM does) is the next rung's. Nsight Compute (H200, 4096^3, docs/fp8.md "What holds the
// promotion"): both consumers wait for their MMAs and add at once, 181 thousand cycles against rung
// 28's 158 per-tensor, 198 with block128, after the k loop's shared-memory descriptors were formed
// once per tile and block128's next scales issued under the first half's MMAs (10-11 % fewer
// cycles; H200 block128 0.1191 / 0.8922 ms at 4096^3 / 8192^3, 0.99 / 0.94x cuBLASLt's block128).
#include "gemm/29_wgmma_fp8_promote.cuh"

namespace rungs::sgemm::wgmma_fp8_promote {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::Promote>;

void run_fp8(const ArgsF8& a) { ws::run_fp8<Parts>(a, "wgmma_fp8_promote"); }

}  // namespace rungs::sgemm::wgmma_fp8_promote
