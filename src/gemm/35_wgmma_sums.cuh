// Rung 35's part, the per-stage sums (used by rungs 35-37; what it adds and why: 35_wgmma_sums.cu):
// SumPerStage, an accumulation that sums each stage's products apart on the tensor core and adds
// them to fp32 registers off it, rounded to nearest.
#pragma once

#include "gemm/15_wgmma_ws.cuh"

namespace rungs::sgemm::ws {

// Accumulation: each stage's products summed apart on the tensor core (t, a fresh sum, by the
// mainloop's sum_stage hook), waited for, the stage released, and added to the fp32 sums d off it
// (round to nearest: the tensor core's accumulation truncates, so a sum over all of k on it is
// biased).
struct SumPerStage {
  template <class M, class S, typename T, bool A_MN, bool B_MN, int R, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[R], const Walk&, int, int, int kb, int ke,
                                                  const typename Problem<T>::Args&, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi&, const Ctx&,
                                                  Release&& release) {
    static_assert(R == M::ACC, "the mainloop's accumulator");
    float t[R];
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int s = it % M::RING;
      detail::mbar_wait(&full[s], (it / M::RING) & 1);
      M::template sum_stage<S, T, A_MN, B_MN>(t, smem + s * M::RING_STAGE_BYTES, cw);
      detail::wgmma_commit();
      detail::wgmma_wait<0>();
      release(s);
#pragma unroll
      for (int i = 0; i < R; ++i) d[i] += t[i];  // round to nearest, off the tensor core
    }
  }
  template <typename T, int R>
  static __device__ __forceinline__ void scale(float (&)[R], const typename Problem<T>::Args&, int, int) {
    static_assert(!Problem<T>::fp8, "fp8 sums need their scales (a promotion)");
  }
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

}  // namespace rungs::sgemm::ws
