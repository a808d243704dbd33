// Rung 28's part, the Accumulation ScaledInTensorCore (used by rung 28, and by the promotions of
// rungs 29 and 30 for the scales that do not depend on k; what it adds: 28_wgmma_fp8.cu).
#pragma once

#include "gemm/15_wgmma_ws.cuh"

namespace rungs::sgemm::ws {

// fp8: the scales that do not depend on k, applied to a consumer's 64 x 2R accumulator (C's rows
// row0 .., columns col0 ..; layout as in detail::store_acc_64xn) before the epilogue stores it:
// tensor: acc * a[0] * b[0]; outer: acc(i, j) * a[i] * b[j]. Rows past m and columns past n read no
// scale (their products are not stored). block128 scales depend on k: applied where the partial
// sums are promoted (rung 29), nothing to do here (rung 28 refuses them).
template <class Args, int R>
__device__ __forceinline__ void scale_acc_fp8(float (&d)[R], const Args& a, int row0, int col0) {
  const float* __restrict__ sa = a.scales.a;
  const float* __restrict__ sb = a.scales.b;
  if (a.scales.kind == Scaling::block128) return;
  if (a.scales.kind == Scaling::tensor) {
    const float s = __ldg(sa) * __ldg(sb);
#pragma unroll
    for (int i = 0; i < R; ++i) d[i] *= s;
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
  for (int j = 0; j < R / 4; ++j)
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
