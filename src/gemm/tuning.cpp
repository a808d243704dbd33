// The `auto` choice for gemm: a table measured with `rungs bench` on the lent GPU. Each entry
// carries the measurement that justified it; a device with no entry gets the top rung.
#include "gemm/tuning.hpp"

#include "detail/tensor_map.hpp"

#include <cstdint>

namespace rungs::sgemm {

namespace {

struct Entry {
  int sm;               // compute capability major*10+minor
  double min_mnk;       // applies when m*n*k >= this (entries are tried in order)
  const char* variant;
  // Why (median of 20, L2 flushed, interleaved with cuBLAS):
  const char* measured;
};

const Entry kTable[] = {
    {90, 0, "cublas",
     "H100 SXM, 2026-11-22: cuBLAS sgemm beat our best rung (warptile, best tile per size) at every size of the "
     "sweep: 1024^3 33 vs 29.2 TFLOP/s, 2048^3 49.8 vs 45.3, 4096^3 51.7 vs 47.3, 8192^3 51.6 vs 48.0 (nn; tn and "
     "nt alike). See docs/BENCHMARKS.md."},
};

}  // namespace

std::string auto_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int sm, GemmType type, Math math,
                         bool rows_aligned) {
  // Tensor cores on the H100 (sm_90, built with sm_90a), nn, median of 20, L2 flushed, cuBLAS
  // interleaved (docs/BENCHMARKS.md, fourth session, commit 4825853):
  //  - f16/bf16, 16-byte aligned rows: wgmma_tma_store (rung 17) 1.02x cuBLAS at 8192^3 (bf16 768
  //    vs 801 TFLOP/s by medians of separate runs, 1.02 by interleaved pairs; f16 1.02), but 0.98 /
  //    0.99 at 4096^3 and 0.92-0.94 at 2048^3: rung 17 from 2^39 multiply-adds (8192^3) up, cuBLAS
  //    below. Fifth session (a18c328 and three earlier runs): against cuBLAS timed alone, rung 17
  //    at 8192^3 is level (bf16 0.99-1.01, f16 0.95-1.00; interleaved 1.01-1.05): kept, a tie.
  //    Rungs 18 (0.80x) and 19 (0.88x at 4096^3, level at 8192^3) are not chosen.
  //  - f16/bf16 rows not 16-byte aligned (odd ld): cuBLAS falls off its fast kernels (bf16
  //    4095x4097x4093: 158 TFLOP/s); rungs 15/17 copy the operands aligned and run TMA: 2.6x
  //    cuBLAS there (415-419 TFLOP/s). Rung 20 (wgmma_ragged: the last tile column as narrow
  //    as it is, C handed to storer warps instead of 2-byte stores from the consumers) beats
  //    rung 17 there (seventh session, 0577b80): bf16 0.275 vs 0.330 ms (3.14x cuBLAS), f16 0.281
  //    vs 0.333, and 4096x4097x4096 bf16 0.246 vs 0.302 (4.4x cuBLAS). Measured only at these
  //    sizes: from 2^35 multiply-adds up. (Rows aligned but n ragged, 4096x4104x4096: cuBLAS
  //    0.181 ms, rung 20 0.204, rung 17 0.220: cuBLAS stays.)
  //  Twelfth session (a184a29): rung 23 (wgmma_balanced: rung 20 with a narrow last column dealt to
  //    the clusters with one full tile fewer, two k tiles per stage) beats rung 20 on unaligned rows:
  //    bf16 4095x4097x4093 0.254 vs 0.273 ms, f16 0.259 vs 0.279, 4096x4097x4096 bf16 0.224 vs
  //    0.243; level where no column is narrow (2048^3 0.0295 vs 0.0292, 8192x8200 1.395 vs 1.385):
  //    rung 23 for f16/bf16 rows not aligned. Aligned 4096x4104x4096 bf16: rung 23 0.179 ms, cuBLAS
  //    0.180 (f16 0.186 / 0.183): a tie, cuBLAS stays. tf32 nn (A through registers: no paired stages)
  //    level with rung 20 (0.548 vs 0.546 at 4095x4097x4093): rung 20 stays. (tf32 nt pairs since
  //    ddde3ac, 1.07x cuBLAS at the aligned 4096x4104x4096, measured at that one shape only.)
  //  - tf32 (tenth session, d7eea71 and 3750ccf: TMA rounds the operands, an m/n-contiguous operand is read
  //    through registers, only tn copies one; eleventh session, 6ed86d7: its fragments
  //    double-buffered): rungs 17/20 at 1.01x cuBLAS nn (2048-8192), 1.00-1.01x nt and tt: level,
  //    cuBLAS stays there; but cuBLAS tf32 tn runs at 218 / 260 / 271 TFLOP/s
  //    (2048^3 / 4096^3 / 8192^3) where rung 20 reaches 251 / 333 / 357: 1.16 / 1.28 / 1.48x
  //    interleaved (1.31x against cuBLAS's own row at 8192): rung 20 for tn from 2^33 multiply-adds
  //    (2048^3) up. Rows not 16-byte aligned:
  //    rung 20 1.86x cuBLAS at 4095x4097x4093 nn (0.552 vs 1.026 ms; tn 1.96x): rung 20 from 2^35
  //    up, as for f16/bf16.
  //  Thirteenth session (99765f0, H100): rung 23 pairs a short last tile row too. tf32 with aligned rows
  //    and a ragged edge, rung 23 against cuBLAS in the same runs: 4096x4104x4096 nn 0.351 vs 0.464-0.474
  //    ms (1.32-1.35x; its swapped product has 4104 rows), 4104x4096x4096 nn 0.385 vs 0.468 (1.21x), nt
  //    0.345 vs 0.368 (1.07x), 4096x4104x4096 nt 0.344 vs 0.367 (1.07x, twelfth session): rung 23 for
  //    tf32 where m or n is not a multiple of 128, from 2^35 (tn keeps rung 20, level with it).
  //  Fourteenth session (13bc237, H100): tf32's register path pairs a narrow tile's stages too:
  //    4104x4096x4096 nn 0.3685 ms (was 0.385; rung 20 0.3951, cuBLAS 0.4602), 4096x4104x4096 tt
  //    0.3715 (0.3967, 0.4099): the rule above stands. At 2056x2048x2048 nn rung 23 is slower than
  //    rung 20 (0.0888 vs 0.0776): below 2^35, not taken.
  //  - tf32x3: wgmma_x3_rs (rung 22, eleventh session): 96.4 / 122.0 / 126.4 TFLOP/s at 2048^3 /
  //    4096^3 / 8192^3 against rung 16's 87.5 / 105.4 / 99.1 and wmma's ~11, 115.2 at 4095x4097x4093,
  //    normwise error as rung 16's (3.1e-7; cuBLAS sgemm 1.1e-6); it runs any shape (A read in place
  //    or copied aligned, B's split copies aligned). Elsewhere (not measured) the top rung that does
  //    the type.
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool hopper = sm == 90 && detail::built_for_sm90a();
  if (math == Math::tf32x3) return hopper ? "wgmma_x3_rs" : "wmma";
  if (type != GemmType::f32 || math == Math::tf32) {
    const bool half = type != GemmType::f32;
    if (hopper && half && !rows_aligned && work >= 34359738368.0) return "wgmma_balanced";  // 2^35
    if (hopper && !rows_aligned && work >= 34359738368.0) return "wgmma_ragged";  // 2^35
    if (hopper && !half && ta == Trans::T && tb == Trans::N && work >= 8589934592.0) return "wgmma_ragged";  // 2^33
    if (hopper && !half && (m % 128 != 0 || n % 128 != 0) && work >= 34359738368.0) return "wgmma_balanced";  // 2^35
    if (hopper && half && work >= 549755813888.0) return "wgmma_tma_store";                  // 2^39
    if (sm == 90) return "cublas";
    return sm >= 80 ? (type == GemmType::f32 ? "wmma" : "mma_sync") : "cublas";
  }
  for (const Entry& e : kTable)
    if (e.sm == sm && work >= e.min_mnk) return e.variant;
  // Not measured on this device: the top rung it can run.
  if (sm >= 80) return "warptile";
  if (sm >= 70) return "outer_product";
  return "cublas";
}

}  // namespace rungs::sgemm
