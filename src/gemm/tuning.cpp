// The `auto` choice for gemm: rules and a table measured with `rungs bench` on an H100. Each entry
// carries the measurement that justified it; a device with no entry gets the top rung.
#include "gemm/tuning.hpp"

#include "core/tensor_map.hpp"

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
     "H100 SXM, nn: our best rung (warptile, its best configuration per size) runs at 0.99 / 0.93 / 0.94 / 0.95x "
     "cuBLAS sgemm at 1024 / 2048 / 4096 / 8192^3 (5668856; at fd866b0 32.9 / 46.4 / 48.6 / 49.1 TFLOP/s against "
     "33.7 / 50.1 / 51.6 / 51.6): a tie at 1024^3, 5-7 % behind above. See docs/gemm.md."},
};

}  // namespace

std::string auto_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int sm, GemmType type, Math math,
                         bool rows_aligned, Scaling scaling, double dram_gbs) {
  // Tensor cores on the H100 (sm_90, built with sm_90a), median of 20, L2 flushed, cuBLAS interleaved
  // (docs/gemm_tc.md, "What auto picks"). The rules below, in order:
  //  - tf32x3: rung 22 (wgmma_x3_rs; 517f0c9): 96.4 / 122.0 / 126.4 TFLOP/s at 2048^3 / 4096^3 /
  //    8192^3 against rung 16's 87.5 / 105.4 / 99.1 and wmma's ~11, 115.2 at 4095x4097x4093, normwise
  //    error as rung 16's (3.1e-7; cuBLAS sgemm 1.1e-6); it runs any shape (A read in place or copied
  //    aligned, B's split copies aligned). Without sm_90a (not measured): wmma.
  //  - f16/bf16 rows not 16-byte aligned (odd ld), from 2^35 multiply-adds: rung 23. cuBLAS falls off
  //    its fast kernels there (bf16 4095x4097x4093: 158 TFLOP/s, 0.862 ms); rung 17 with the operands
  //    copied aligned runs 2.6x cuBLAS (415-419 TFLOP/s); rung 20 (the last tile column as narrow as it
  //    is, C handed to storer warps) beats rung 17 (0577b80): bf16 0.275 vs 0.330 ms, f16 0.281 vs
  //    0.333, 4096x4097x4096 bf16 0.246 vs 0.302; rung 23 (rung 20 with the narrow column dealt to the
  //    clusters with one full tile fewer, two k tiles per stage) beats rung 20 (a184a29): bf16
  //    4095x4097x4093 0.254 vs 0.273 ms, f16 0.259 vs 0.279, 4096x4097x4096 bf16 0.224 vs 0.243, and
  //    is level where no column is narrow (2048^3 0.0295 vs 0.0292, 8192x8200 1.395 vs 1.385).
  //    Measured only at these sizes, hence 2^35.
  //  - tf32 rows not aligned, from 2^35: rung 20, 1.86x cuBLAS at 4095x4097x4093 nn (0.552 vs
  //    1.026 ms; tn 1.96x; 3750ccf). Rung 23 measured level with it (0.548 vs 0.546 ms nn at a184a29,
  //    where tf32's register path did not pair stages; e67241e pairs them).
  //  - tf32 tn from 2^33 (2048^3): rung 20. TMA rounds the operands (d7eea71), an m/n-contiguous
  //    operand is read through registers, only tn copies one. cuBLAS tf32 tn runs at 218 / 260 / 271
  //    TFLOP/s (2048^3 / 4096^3 / 8192^3) where rung 20 reaches 251 / 333 / 357: 1.16 / 1.28 / 1.48x
  //    interleaved, 1.31x against cuBLAS's own row at 8192 (3750ccf).
  //  - tf32 with m or n not a multiple of 128, from 2^35: rung 23 (its narrow last column dealt and
  //    its k tiles paired, on tf32's register path too; its short last row paired where that saves a
  //    round). tn is taken by the rule above (rung 23 is level with rung 20 there). Against cuBLAS in
  //    the same runs (99765f0): 4096x4104x4096 nn 0.351 vs 0.464-0.474 ms (1.32-1.35x; its swapped
  //    product has 4104 rows), 4104x4096x4096 nn 0.385 vs 0.468 (1.21x), nt 0.345 vs 0.368 (1.07x);
  //    4096x4104x4096 nt 0.344 vs 0.367 (1.07x, ddde3ac). With the register path's narrow tiles
  //    paired (13bc237): 4104x4096x4096 nn 0.3685 ms (rung 20 0.3951, cuBLAS 0.4602), 4096x4104x4096
  //    tt 0.3715 (0.3967, 0.4099). At 2056x2048x2048 nn rung 23 is slower than rung 20 (0.0888 vs
  //    0.0776 ms), hence 2^35; below it neither rung is taken and cuBLAS runs.
  //  - f16/bf16 from 2^39 multiply-adds (8192^3): rung 17 (wgmma_tma_store), 1.02x cuBLAS at 8192^3
  //    (4825853: bf16 768 vs 801 TFLOP/s by medians of separate runs, 1.02 by interleaved pairs; f16
  //    1.02), level against cuBLAS timed alone (a18c328 and three runs before it: bf16 0.99-1.01, f16
  //    0.95-1.00; interleaved 1.01-1.05): kept, a tie. At 4096^3 0.98 / 0.99x and at 2048^3
  //    0.92-0.94x: cuBLAS below 2^39.
  //  - Otherwise cuBLAS: tf32 nn, nt and tt with aligned rows run level on rungs 17/20 (1.01x nn at
  //    2048-8192^3, 1.00-1.01x nt and tt; 6ed86d7); aligned ragged f16/bf16, 4096x4104x4096: rung 23
  //    0.179 ms, cuBLAS 0.180 (f16 0.186 / 0.183), a tie (a184a29; rung 20 0.204, rung 17 0.220 at
  //    0577b80). Rungs 18 (0.80x) and 19 (0.88x at 4096^3, level at 8192^3) are not chosen.
  //    sm_90 without sm_90a runs cuBLAS; other sm_80+ GPUs (not measured) mma_sync (f16, bf16) or
  //    wmma (tf32).
  //  - Decode shapes, f16/bf16 nt (W stored n x k, as PyTorch's Linear) with aligned rows, H100
  //    (f36fe0c, `rungs bench gemm --dtype bf16,f16 --trans nt --m 1,8,16,32,64,128`, docs/gemm_tc.md
  //    "Decode shapes"): where W holds 2^27 elements or more (28672 x 8192, 8192 x 28672: 470 MB)
  //    rung 26 (decode_wgmma) reads at 91-96 % of DRAM, 1.02-1.08x cuBLAS at m = 1..128 (28672 x
  //    8192 at m = 128: 1.00-1.01x, a tie); at 7168 x 8192 it runs 1.07-1.09x at m = 1 and 8 (82-83 %,
  //    the same as a 117 MB streaming read: 0.0463 ms for cub::DeviceReduce) and 0.90-0.99x from
  //    m = 16, where cuBLAS stays; on the H200 (4.8 TB/s on paper; 86211bc, the same command) 1.09-1.10x
  //    at m = 1..16 (74-76 %: rung 26 35.2 us against cuBLAS's 38.0 at m = 16 in the main job's
  //    table) and 0.86-0.91x from m = 32, so on a device with more than 4 TB/s of DRAM the rule takes
  //    m <= 16. Both rules ask for n >= 7168 (rung 26's 128-row tiles and at most 8
  //    splits per tile need many rows of W; shorter n is not measured). m = 1 with a short n and a
  //    long k (W from 2^25 elements): rung 25 (decode_splitk: rung 24's kernel, k split over the
  //    blocks), 1.03-1.04x at 7168 x 8192 (14456e9). On the H100 nn and other transposes stay on cuBLAS
  //    (rung 26 reads W in place through wgmma's transpose bit at 0.86-1.04x: 83 % at 7168 x 8192,
  //    92-94 % at 28672 x 8192, where cuBLAS reads at 86-96 %). On the H200 (118ea0a, `rungs bench gemm
  //    --dtype bf16|f16 --trans nn --m 1,8,16,32,64,65,96,128 --n 7168,28672 --k 8192 --variant
  //    decode_wgmma --reps 20`, and n 8192 k 28672; two runs of bf16 on two GPUs) cuBLAS's nn kernel at
  //    m = 128 reads a large W at 53 %: rung 26 1.61-1.63x at 28672 x 8192 and 1.12-1.16x at 8192 x
  //    28672 (f16 the same), while at m = 96 it is 0.92-0.94x / 1.03-1.07x and at m = 65 0.83-0.91x;
  //    and at 7168 x 8192 bf16 m <= 16 1.06-1.07x (f16 0.92-0.93x: cuBLAS's f16 kernel is faster there).
  //    At m = 97 (fbf021f, auto) cuBLAS still wins: rung 26 0.91 / 0.93x (bf16 / f16) at 28672 x 8192,
  //    0.99x at 8192 x 28672. So on a device of more than 4 TB/s, nn at m = 128 from 2^27 elements of W
  //    (m = 98-127 not measured), and bf16 nn at m <= 16 on 2^25-2^27, run rung 26.
  //    Rung 32 (decode_resident) is not taken: one run (4bdc263) has it 1.6-2.6 % faster than rung 26
  //    at 28672 x 8192, m = 16 and 64, and slower at 7168 x 8192 and 8192 x 28672; on an H200
  //    (acccc5b) level at 28672 x 8192 and slower at the other two.
  //    On the H200 (5437ce3 + rung 33, `rungs bench gemm --dtype bf16 --m 1,16,32,64,128 --n
  //    7168,28672 --k 8192 --trans nt --variant decode_wgmma,decode_wide --reps 20`, and n 8192 k
  //    28672): rung 33 (decode_wide, 128 blocks of 224 rows at n = 28672) at 28672 x 8192 takes 114.8-115.2
  //    us at m = 64 against rung 26's 119.7-121.6 (90 % of DRAM, 1.01-1.02x cuBLAS, against 85-86 %,
  //    0.97x) and 119.3-119.6 against 120.5-121.1 at m = 128 (f16 the same); it loses at m <= 32 (the
  //    64-row MMA side padded), everywhere at 8192 x 28672 (A read from L2 by every block: 0.68-0.95x
  //    cuBLAS against rung 26's 1.01-1.11x) and to cuBLAS at 7168 x 8192 (0.98 / 0.89x at m = 64 /
  //    128, rung 26 0.96 / 0.84x); on another H200 (4a24868, the main job's decode workload) 117 /
  //    122 us at m = 64 / 128 against rung 26's 118 / 122; on a third (6bc9f8c, the same) 120 / 125
  //    against 120 / 122. At m = 128 the three runs put rung 33 1 % ahead, level and 2.5 % behind, so
  //    it stays on rung 26. So on a device of more than 4 TB/s, 32 < m <= 64 with n >= 16384 and n >=
  //    2k runs rung 33; on the H100 it is not measured and rung 26 stays.
  //  - fp8: cuBLAS (cublasLt, in the cublas rung) on every device. Rung 28 (wgmma_fp8) is faster
  //    (1.00 / 1.05 / 1.04x per-tensor at 2048 / 4096 / 8192^3 nt, H100, 6b05a1d) but does not
  //    promote: its error is 18x cuBLASLt's at k = 8192 and 43x at 32768; rung 29 (promoted, the same
  //    error as cuBLASLt's) runs at 0.83-0.93x, and at 0.86-0.89x cuBLASLt's own block128 at 4096 and
  //    8192^3 (1.09x at 2048^3, one shape: not taken). Where cuBLASLt has no fp8 (before sm_89) the
  //    cublas rung throws Unsupported.
  //  - fp8 decode shapes with outer scales (a per row of A, b per row of W, as serving stacks keep
  //    them) or block128 scales, nt with aligned rows, m <= 64, n >= 7168, n k >= 2^25: rung 31
  //    (decode_fp8), H100 (19fc8ef, `rungs bench gemm --dtype fp8 --scaling outer|block128 --m
  //    1,16,64,128 --n 7168,28672 --k 8192 --trans nt`): outer 1.54 / 1.40 / 1.19x cuBLASLt at m = 1 /
  //    16 / 64 on 7168 x 8192 and 1.17 / 1.14 / 1.08x on 28672 x 8192 (H200, f36fe0c: 1.05-1.70x);
  //    block128 (its scales staged in shared memory at m > 16) 1.12 / 1.15 / 1.09x at m = 16 / 32 /
  //    64 on 7168 x 8192 and 1.12 / 1.09 / 1.08x on 28672 x 8192, and at m = 1 cuBLASLt found no
  //    block128 algorithm. m = 128 (outer 0.89 / 0.97x, block128 0.99 / 0.87x) stays on cuBLASLt.
  //    With one scale per tensor cuBLASLt is level or faster (0.84-1.03x), so tensor stays on it.
  //    H200 (ade6506, the same command, --reps 30): outer 1.97 / 1.71 / 1.21x at m = 1 / 16 / 64 on
  //    7168 x 8192 and 1.56 / 1.40 / 1.22x on 28672 x 8192; block128 1.21 / 1.19x at m = 16 / 64 on
  //    7168 x 8192, but 1.03 / 0.88x on 28672 x 8192: on a device of more than 4 TB/s on paper,
  //    block128 at m > 16 and n k >= 2^27 stays on cuBLASLt. Past m = 64 on the H200 (118ea0a,
  //    `--m 64,65,96,128 --variant decode_fp8,decode_fp8_wide`, two runs on two GPUs): 7168 x 8192 outer
  //    1.04-1.07 / 1.00-1.01 / 1.10-1.11x at m = 65 / 96 / 128, block128 1.04-1.05x at m = 96 and 128
  //    (at m = 65 cuBLASLt has no block128 algorithm); 28672 x 8192 0.90-0.99x outer and 0.69-0.70x
  //    block128. So on a device of more than 4 TB/s rung 31 takes both up to m = 128 on a W under 2^27
  //    elements.
  //    Rung 34 (decode_fp8_wide, rung 31 in rung 33's orientation) on the H200 (2458c1f + rung 34,
  //    `rungs bench gemm --dtype fp8 --scaling outer --m 1,16,64 --n 7168,28672 --k 8192 --trans nt
  //    --variant decode_fp8,decode_fp8_wide --reps 20`): 28672 x 8192 62.2 / 62.9 / 63.3 us at m = 1
  //    / 16 / 64 against rung 31's 62.3 / 65.0 / 67.6 (1.43 / 1.31x cuBLASLt at m = 16 / 64 against
  //    1.36 / 1.24x); 7168 x 8192 24.9 / 25.7 / 23.4 against 21.5 / 22.7 / 23.7. So on a device of
  //    more than 4 TB/s, outer scales at 16 <= m <= 64 with n >= 16384 and n >= 2k run rung 34.
  //    block128 (6bc9f8c, the same command with --scaling block128): 28672 x 8192 67.6 / 68.0 us at
  //    m = 16 / 64 (1.11 / 1.12x cuBLASLt's block128) against rung 31's 68.2 / 83.3 (1.10 / 0.90x);
  //    7168 x 8192 29-30 us against 23.5-26.9. So block128 at 16 < m <= 64 on the same W runs rung 34
  //    there, where rung 31 gave way to cuBLASLt. Its tensor form and the H100 are not measured.
  //  - fp8 forms cuBLASLt does not run (transposes other than nt, rows not 16-byte aligned), on
  //    Hopper: rung 29 (wgmma_fp8_promote), which copies the operands k-major first; elsewhere the
  //    cublas rung, which throws Unsupported for them.
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double w_elems = static_cast<double>(n) * static_cast<double>(k);  // a decode shape's weights
  const bool hopper = sm == 90 && detail::built_for_sm90a();
  // More than 4 TB/s of DRAM on paper (the H200's 4.8, not the H100's 3.35): the decode rules that
  // measured differently on the two.
  const bool fast_dram = dram_gbs > 4000.0;
  if (type == GemmType::fp8) {
    const bool decode_scaling = scaling == Scaling::outer || scaling == Scaling::block128;
    // On a device of more than 4 TB/s (H200), block128 at m > 16 with W from 2^27 elements that rung
    // 34 does not take stays on cuBLASLt (rung 31 0.88x at m = 64 on 28672 x 8192).
    const bool fast_dram_block = fast_dram && scaling == Scaling::block128 && m > 16 &&
                                 w_elems >= 134217728.0;  // 2^27
    // H200: rung 34 where W is long and narrow (28672 x 8192), outer scales at m >= 16, block128 at
    // m > 16.
    const bool wide_m = scaling == Scaling::outer ? m >= 16 : (scaling == Scaling::block128 && m > 16);
    if (hopper && fast_dram && wide_m && rows_aligned && ta == Trans::N && tb == Trans::T && m <= 64 && n >= 16384 &&
        n >= 2 * k && w_elems >= 134217728.0)  // 2^27
      return "decode_fp8_wide";
    // H200: outer and block128 scales up to m = 128 on a W under 2^27 elements (7168 x 8192), where
    // rung 31 stays ahead of cuBLASLt (or cuBLASLt has no block128 algorithm, m = 65).
    const bool fast_dram_tall = fast_dram && m <= 128 && w_elems < 134217728.0;
    if (hopper && decode_scaling && rows_aligned && ta == Trans::N && tb == Trans::T && m >= 1 &&
        (m <= 64 || fast_dram_tall) && n >= 7168 && w_elems >= 33554432.0 && !fast_dram_block)  // 2^25
      return "decode_fp8";
    // cuBLASLt's fp8 products take only the TN form (our ta = N, tb = T) with 16-byte rows: the
    // cublas rung throws Unsupported for the rest. On Hopper rung 29 (promoted, the error of
    // cuBLASLt's) copies those operands k-major and runs them (at nt 0.83-0.93x cuBLASLt's speed).
    if (hopper && (ta != Trans::N || tb != Trans::T || !rows_aligned)) return "wgmma_fp8_promote";
    return "cublas";
  }
  if (math == Math::tf32x3) return hopper ? "wgmma_x3_rs" : "wmma";
  if (type != GemmType::f32 || math == Math::tf32) {
    const bool half = type != GemmType::f32;
    if (hopper && half && rows_aligned && ta == Trans::N && tb == Trans::T) {
      // H200: rung 33 where W is long and narrow (its fitted tiles fill the SMs, A's L2 traffic small).
      if (fast_dram && m > 32 && m <= 64 && n >= 16384 && n >= 2 * k && w_elems >= 134217728.0)  // 2^27
        return "decode_wide";
      if (m >= 1 && m <= 128 && n >= 7168 && w_elems >= 134217728.0) return "decode_wgmma";  // 2^27
      const int64_t few = fast_dram ? 16 : 8;  // rows of A where rung 26 wins at 2^25 (H200 / H100)
      if (m >= 1 && m <= few && n >= 7168 && w_elems >= 33554432.0) return "decode_wgmma";  // 2^25
      if (m == 1 && w_elems >= 33554432.0) return "decode_splitk";                          // 2^25
    }
    // W stored k x n (nn) on the H200: rung 26 where cuBLAS falls behind it: bf16 at m <= 16 on a W
    // under 2^27 elements, f16 and bf16 at m = 128 on a larger one.
    if (hopper && half && fast_dram && rows_aligned && ta == Trans::N && tb == Trans::N && n >= 7168) {
      if (type == GemmType::bf16 && m >= 1 && m <= 16 && w_elems >= 33554432.0 && w_elems < 134217728.0)
        return "decode_wgmma";                                        // 2^25, 2^27
      if (m == 128 && w_elems >= 134217728.0) return "decode_wgmma";  // 2^27
    }
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
