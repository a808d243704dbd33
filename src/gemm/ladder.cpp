// The SGEMM ladder: the one list of rungs, in order. The registry (variants), the
// dispatcher, the CLI, the tests and the plots all read it; adding a rung is one line here
// plus its file. A rung's number is its index, and its file carries that number as prefix.
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm {

const std::vector<Rung>& ladder() {
  static const std::vector<Rung> rungs = {
      {"cpu_naive", "", "CPU, one thread, i-j-k loops, float accumulation (article 004's serial version)", 0, false,
       cpu_naive::run},
      {"naive", "cpu_naive",
       "one thread per C element; threadIdx.x walks rows, so a warp's loads are strided (article 004 v1)",
       70, false, naive::run},
      {"coalesced", "naive",
       "one thread per C element; threadIdx.x walks columns, so a warp reads B and writes C coalesced",
       70, false, coalesced::run},
      {"smem_tiling", "coalesced",
       "32x32 tiles of A and B staged in shared memory (article 001, article 004 v2)", 70, false,
       smem_tiling::run},
      {"blocktile_1d", "smem_tiling",
       "each thread computes 8 outputs of a column from shared memory (article 004 v3)", 70, false,
       blocktile_1d::run},
      {"blocktile_2d", "blocktile_1d",
       "each thread computes an 8x8 tile; rearranged 1D thread index for loads (v3/v4)", 70, false,
       blocktile_2d::run},
      {"vectorized", "blocktile_2d",
       "float4 global loads, A tile stored transposed in shared memory: no bank conflicts (v5/v6)",
       70, false, vectorized::run},
      {"outer_product", "vectorized",
       "register fragments from float4 shared loads, outer product per k step (v7)", 70, false,
       outer_product::run},
      {"double_buffer", "outer_product",
       "multi-stage cp.async pipeline: the next tiles load while this one computes (v8)", 80, false,
       double_buffer::run},
      {"warptile", "double_buffer",
       "warp tiling, tuned tile shapes per size, block swizzle for L2 reuse", 80, false, warptile::run},
      {"kahan", "warptile",
       "Kahan-compensated accumulation: fp32 error well below plain fp32 at large k (article 003)", 80,
       false, kahan::run},
      {"cublas", "",
       "cublasSgemm (true fp32); cublasGemmEx with fp32 accumulation for f16/bf16, FAST_TF32 for tf32; "
       "cublasLtMatmul for fp8 (ta = N, tb = T); epilogues as the product, then plain kernels: the vendor baseline "
       "(article 004 v9)",
       75, true, cublas::run, cublas::run_tf32, nullptr, cublas::run_f16, cublas::run_bf16, cublas::run_fp8, nullptr,
       cublas::run_epi},
      // The tensor-core ladder (f16, bf16, and float with Math::tf32 / Math::tf32x3).
      {"wmma", "warptile",
       "tensor cores through the CUDA WMMA API, 64x64 shared-memory tiles (article 004 v10); f16 bf16 tf32 tf32x3",
       80, false, nullptr, wmma::run_tf32, wmma::run_tf32x3, wmma::run_f16, wmma::run_bf16},
      {"mma_sync", "wmma",
       "PTX mma.sync + ldmatrix, swizzled conflict-free shared memory, 4-stage cp.async pipeline (Ampere design); f16 bf16",
       80, false, nullptr, nullptr, nullptr, mma_sync::run_f16, mma_sync::run_bf16},
      {"wgmma", "mma_sync",
       "Hopper wgmma.m64n256 from TMA-loaded 128B-swizzled tiles, 4 mbarrier stages, clusters of 2 multicasting "
       "B, one tile per block, no producer warpgroup: thread 0 loads and refills (sm_90a); f16 bf16 tf32 any "
       "transpose (rows TMA cannot address copied aligned first)",
       90, false, nullptr, wgmma::run_tf32, nullptr, wgmma::run_f16, wgmma::run_bf16, nullptr, wgmma::parts},
      {"wgmma_ws", "wgmma",
       "warp-specialized persistent wgmma: TMA producer warpgroup + 2 consumers (setmaxnreg), clusters of 2 "
       "multicasting B, banded tile order (sm_90a); f16 bf16 tf32 any transpose, unaligned or tf32 m/n-major "
       "operands copied to aligned k-major scratch first",
       90, false, nullptr, wgmma_ws::run_tf32, nullptr, wgmma_ws::run_f16, wgmma_ws::run_bf16, nullptr,
       wgmma_ws::parts, wgmma_ws::run_epi},
      {"wgmma_narrow", "wgmma_ws",
       "rung 15 with narrow tiles multiplied only as wide as they are: a tile with at most 64 (128) columns left "
       "issues wgmma n64 (n128) and loads only those columns of B (sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_narrow::run_tf32, nullptr, wgmma_narrow::run_f16, wgmma_narrow::run_bf16, nullptr,
       wgmma_narrow::parts},
      {"wgmma_tma_store", "wgmma_ws",
       "rung 15 with its epilogue through shared memory and TMA stores, left in flight while the next tile "
       "runs (sm_90a); f16 bf16 tf32 (beta != 0 or an unaligned C: rung 15's direct stores)",
       90, false, nullptr, wgmma_tma_store::run_tf32, nullptr, wgmma_tma_store::run_f16, wgmma_tma_store::run_bf16, nullptr,
       wgmma_tma_store::parts, wgmma_tma_store::run_epi},
      {"wgmma_pingpong", "wgmma_tma_store",
       "ping-pong consumers: each warpgroup owns whole 128x128 tiles and they take turns on the tensor cores, one's "
       "TMA-store epilogue under the other's MMAs (sm_90a); f16 bf16 any transpose",
       90, false, nullptr, nullptr, nullptr, wgmma_pingpong::run_f16, wgmma_pingpong::run_bf16, nullptr,
       wgmma_pingpong::parts},
      {"wgmma_streamk", "wgmma_tma_store",
       "rung 17 with a stream-K tail: the last two rounds' tiles split by k evenly over all clusters, partial sums "
       "added by each tile's first cluster (sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_streamk::run_tf32, nullptr, wgmma_streamk::run_f16, wgmma_streamk::run_bf16, nullptr,
       wgmma_streamk::parts},
      {"wgmma_ragged", "wgmma_narrow",
       "rung 16 with rung 17's TMA stores for ragged shapes: rows past m skipped, and C that TMA cannot store "
       "written by the producer's idle warps while the next tile runs (sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_ragged::run_tf32, nullptr, wgmma_ragged::run_f16, wgmma_ragged::run_bf16, nullptr,
       wgmma_ragged::parts},
      {"wgmma_overlap", "wgmma_tma_store",
       "rung 17 with each tile's epilogue under the next tile's MMAs: C packed to 16 bits in registers, its "
       "shared-memory fill and TMA stores issued after the next tile's first two k tiles' MMAs (sm_90a); f16 bf16",
       90, false, nullptr, nullptr, nullptr, wgmma_overlap::run_f16, wgmma_overlap::run_bf16, nullptr,
       wgmma_overlap::parts, wgmma_overlap::run_epi},
      {"wgmma_deal", "wgmma_ragged",
       "rung 20 with its ragged edges dealt: a narrow last tile column (<= 64 columns) dealt two tiles each to the "
       "clusters with one full tile fewer, run last; a short last tile row (odd tile rows) paired side by side "
       "(sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_deal::run_tf32, nullptr, wgmma_deal::run_f16, wgmma_deal::run_bf16, nullptr,
       wgmma_deal::parts},
      {"wgmma_balanced", "wgmma_deal",
       "rung 22 with its narrow tiles' stages holding two k tiles each (A, A', B, B'), twice the bytes in flight "
       "for a tile bound by its loads' latency (sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_balanced::run_tf32, nullptr, wgmma_balanced::run_f16, wgmma_balanced::run_bf16, nullptr,
       wgmma_balanced::parts},
      // The decode rungs: C = A W^T with m <= 128 rows of A (CUDA cores), bound by reading W once.
      {"decode_rows", "",
       "decode GEMM on CUDA cores: gemv rung 6's design carrying up to 8 rows of A (staged in shared memory as "
       "fp32), each W element read once by 16-byte loads, warp-shuffle sums; m <= 128, either layout of W; "
       "f16 bf16",
       80, false, nullptr, nullptr, nullptr, decode_rows::run_f16, decode_rows::run_bf16},
      {"decode_splitk", "decode_rows",
       "rung 24 with k split over blocks when n is too short to fill the GPU: partial sums in scratch, then a "
       "fixed-order second pass with the alpha/beta epilogue (deterministic, no atomics); f16 bf16",
       80, false, nullptr, nullptr, nullptr, decode_splitk::run_f16, decode_splitk::run_bf16},
      {"decode_wgmma", "wgmma",
       "decode shapes (few rows of A, W stored n x k): C^T = W A^T on wgmma.m64nNk16 with m as N (8 to 128), "
       "W streamed by TMA through up to 8 stages, k split over the blocks of a cluster when the tiles do not fill "
       "the SMs, the splits' sums added in split order through distributed shared memory (deterministic) "
       "(sm_90a); f16 bf16, W either layout (A stored k x m, or rows TMA cannot address, copied first)",
       90, false, nullptr, nullptr, nullptr, decode_wgmma::run_f16, decode_wgmma::run_bf16, nullptr,
       decode_wgmma::parts},
      {"decode_streamk", "decode_wgmma",
       "rung 26 with a stream-K schedule: one persistent block per SM, the (tile, k tile) units cut into equal "
       "contiguous ranges that cross tiles, the TMA stages streaming across tile boundaries, cut tiles' fp32 "
       "partial sums added in k order by a second kernel (deterministic) (sm_90a); f16 bf16 (A stored k x m, or "
       "rows TMA cannot address, copied first)",
       90, false, nullptr, nullptr, nullptr, decode_streamk::run_f16, decode_streamk::run_bf16, nullptr,
       decode_streamk::parts},
      // The fp8 rungs (e4m3 / e5m2 operands, Scales, bf16 or float C).
      {"wgmma_fp8", "wgmma_tma_store",
       "fp8 on rung 17's structure: wgmma.m64n256k32 e4m3/e5m2 (any pair), 128 fp8 of k per stage, summed in the "
       "tensor core's accumulator over all of k (not promoted), tensor and outer scales applied to it in the "
       "epilogue (sm_90a); any transpose (m/n-major or unaligned operands copied k-major first); not block128",
       90, false, nullptr, nullptr, nullptr, nullptr, nullptr, wgmma_fp8::run_fp8,
       wgmma_fp8::parts},
      {"wgmma_fp8_promote", "wgmma_fp8",
       "rung 28 with two-level accumulation: each k tile (128 k) multiplied in two 128-column halves "
       "(wgmma.m64n128k32 from a zeroed partial sum) whose sums are added into fp32 registers, block128 scales "
       "applied there, tensor and outer in the epilogue (sm_90a); fp8 any pair, every scaling",
       90, false, nullptr, nullptr, nullptr, nullptr, nullptr, wgmma_fp8_promote::run_fp8,
       wgmma_fp8_promote::parts},
      {"wgmma_fp8_overlap", "wgmma_fp8_promote",
       "rung 29 with the promotion hidden: the two consumer warpgroups issue their half-k-tile MMAs in turns "
       "(named barriers), so one adds its partial sum into fp32 registers while the tensor core runs the "
       "other's (sm_90a); fp8 any pair, every scaling",
       90, false, nullptr, nullptr, nullptr, nullptr, nullptr, wgmma_fp8_overlap::run_fp8,
       wgmma_fp8_overlap::parts},
      {"decode_fp8", "decode_wgmma",
       "rung 26's decode design for fp8: C^T = W A^T on wgmma.m64nNk32 e4m3/e5m2 (any pair) with m as N (8 to "
       "128), 128 fp8 of k per TMA stage (up to 13 stages), the partial sums promoted into fp32 registers every "
       "k tile with the block128 scales, tensor and outer in the epilogue, split-K for short n (sm_90a); m <= 128, "
       "every scaling (m/n-major or unaligned operands copied k-major first)",
       90, false, nullptr, nullptr, nullptr, nullptr, nullptr, decode_fp8::run_fp8},
      {"decode_resident", "decode_wgmma",
       "rung 26 with every block resident at once: two blocks per SM, each with the stages that fit half an SM's "
       "shared memory, 128-row tiles split against the 2 x SMs slots, so no SM idles and no second wave "
       "(sm_90a); f16 bf16 (A stored k x m, or rows TMA cannot address, copied first)",
       90, false, nullptr, nullptr, nullptr, decode_resident::run_f16, decode_resident::run_bf16, nullptr,
       decode_resident::parts},
      {"decode_wide", "decode_wgmma",
       "decode shapes in cuBLAS's orientation: A's rows on wgmma's 64-row side (one consumer warpgroup per 64), "
       "W's rows as its N, fitted so one wave of unsplit tiles covers n (N = 32 to 256: 56 at n = 7168, 224 at "
       "28672), whole k per block, no split (sm_90a); f16 bf16, W stored n x k (tb = T); A stored k x m, or rows "
       "TMA cannot address, copied first",
       90, false, nullptr, nullptr, nullptr, decode_wide::run_f16, decode_wide::run_bf16},
      {"decode_fp8_wide", "decode_fp8",
       "rung 31's fp8 decode product in rung 33's orientation: A's rows (m <= 64) on wgmma.m64nNk32's 64-row side, "
       "W's rows as its N fitted to one wave (56 at n = 7168, 224 at 28672), each k tile's partial sums promoted "
       "into fp32 registers with the block128 scales, tensor and outer in the epilogue, no split (sm_90a); fp8 "
       "any pair, every scaling, m <= 64 (operands not K-major, or rows TMA cannot address, copied first)",
       90, false, nullptr, nullptr, nullptr, nullptr, nullptr, decode_fp8_wide::run_fp8},
      // The per-stage sums and 3xTF32 on them.
      {"wgmma_sums", "wgmma_ws",
       "rung 15 with each stage summed apart on the tensor core and added to fp32 registers off it, rounded to "
       "nearest (the tensor core's accumulation truncates), 128x128 tiles (sm_90a); f16 bf16 tf32",
       90, false, nullptr, wgmma_sums::run_tf32, nullptr, wgmma_sums::run_f16, wgmma_sums::run_bf16, nullptr,
       wgmma_sums::parts},
      {"wgmma_x3", "wgmma_sums",
       "3xTF32 on rung 35's per-stage sums: operands split once into tf32 big and small parts, hi*lo + lo*hi + "
       "hi*hi per k step, each 32-deep stage summed apart and added in fp32 (sm_90a); tf32x3",
       90, false, nullptr, nullptr, wgmma_x3::run_tf32x3, nullptr, nullptr, nullptr,
       wgmma_x3::parts},
      {"wgmma_x3_rs", "wgmma_x3",
       "3xTF32 with A split in registers: A's fp32 tile read once by TMA (in place when k-contiguous), split "
       "into tf32 parts by the consumers, wgmma's register form for A; B split by a copy as in rung 36 (sm_90a); "
       "tf32x3",
       90, false, nullptr, nullptr, wgmma_x3_rs::run_tf32x3, nullptr, nullptr, nullptr,
       wgmma_x3_rs::parts},
  };
  return rungs;
}

}  // namespace rungs::sgemm
