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
// Accumulation ScaledInTensorCore (below), rung 17's InTensorCore and these scales.
// The tensor core adds fp8 products with fewer mantissa bits than fp32 (~14, DeepGEMM measures), so
// the error grows with k faster than cuBLASLt's, which promotes (GemmFp8.ErrorAtLargeKBesideCublas).
// Bounded by: rung 17's data rate per stage, so the mainloop takes half of bf16's time at the same k
// while the epilogue costs what it did (its share doubles, ~20 % of a tile at k = 4096); the clocks,
// which sustained fp8 MMAs lower.
// Prediction: ~0.85-0.95x cuBLASLt per-tensor at 4096^3; measured: 1.05x (1.04x at 8192^3, H100), but
// 18x cuBLASLt's normwise error at k = 8192: auto does not take it (rung 29 promotes).
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// fp8: the scales that do not depend on k, applied to a consumer's 64 x 256 accumulator (C's rows
// row0 .., columns col0 ..; layout as in detail::store_acc_64xn) before the epilogue stores it:
// tensor: acc * a[0] * b[0]; outer: acc(i, j) * a[i] * b[j]. Rows past m and columns past n read no
// scale (their products are not stored). block128 scales depend on k: applied where the partial
// sums are promoted (rung 29), nothing to do here (rung 28 refuses them).
template <class Args>
__device__ __forceinline__ void scale_acc_fp8(float (&d)[128], const Args& a, int row0, int col0) {
  const float* __restrict__ sa = a.scales.a;
  const float* __restrict__ sb = a.scales.b;
  if (a.scales.kind == Scaling::block128) return;
  if (a.scales.kind == Scaling::tensor) {
    const float s = __ldg(sa) * __ldg(sb);
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] *= s;
    return;
  }
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
  float ra[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + 16 * w + g + 8 * h;
    ra[h] = r < m ? __ldg(sa + r) : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < 32; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int c = col0 + 8 * j + 2 * q + e;
      const float cb = c < n ? __ldg(sb + c) : 0.0f;
      d[4 * j + e] *= ra[0] * cb, d[4 * j + 2 + e] *= ra[1] * cb;
    }
}

// Accumulation: the tensor core's accumulator over all of k (InTensorCore), then the scales that
// do not depend on k, before the tile's store.
struct ScaledInTensorCore : InTensorCore {
  template <typename T>
  static __device__ __forceinline__ void scale(float (&d)[128], const typename Problem<T>::Args& a, int row0,
                                               int col0) {
    static_assert(Problem<T>::fp8, "fp8 problems: their scales");
    scale_acc_fp8(d, a, row0, col0);
  }
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_fp8 {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::ScaledInTensorCore>;

void run_fp8(const ArgsF8& a) {
  if (a.scales.kind == Scaling::block128)
    detail::unsupported("wgmma_fp8", "block128 scales need promotion (rung 29)");
  ws::run_fp8<Parts>(a, "wgmma_fp8");
}

}  // namespace rungs::sgemm::wgmma_fp8
