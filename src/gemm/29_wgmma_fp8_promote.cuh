// Rung 29's part, the promoted accumulation (used by rungs 29 and 30; what it adds and why:
// 29_wgmma_fp8_promote.cu): PromoteWith<Turns>, the consumers' k loop that adds the tensor core's
// partial sums into fp32 registers every k tile, with the block128 scales.
#pragma once

#include "gemm/17_wgmma_tma_store.cuh"
#include "gemm/28_wgmma_fp8.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// fp8 block128: the scales a consumer's promotions need (rungs 29 and 30). A thread's two rows of
// the consumer's 64 (r0, r1) and the tile's two 128-column blocks of B (its columns n0 .. n0 + 255,
// n0 a multiple of 256), clamped into the arrays (a row or block past m or n multiplies products
// that are never stored). product(s) gives s[half][h], the scale of row h in column block `half` for
// the k block loaded last (1 for tensor and outer, whose scales the epilogue applies); prefetch(kt)
// loads k block kt's four scales, a k tile ahead of their use so that their latency is not between
// two k tiles' MMAs: rungs 29 and 30 issue them under a k tile's first half's MMAs, where their
// address arithmetic costs nothing (ncu: at the top of the k tile it did).
struct Block128Scales {
  const float* __restrict__ sa0;
  const float* __restrict__ sa1;
  const float* __restrict__ sb0;
  const float* __restrict__ sb1;
  int ke;                                   // one past the consumer's last k block of this tile
  bool on;                                  // Scaling::block128
  float x0 = 1.0f, x1 = 1.0f, y0 = 1.0f, y1 = 1.0f;  // the next k block's: rows r0, r1; blocks 0, 1
  template <class Args>
  __device__ __forceinline__ Block128Scales(const Args& a, int row0, int n0, int kb, int ke_)
      : ke(ke_), on(a.scales.kind == Scaling::block128) {
    const int t = static_cast<int>(threadIdx.x % 128), w = t / 32, g = (t % 32) / 4;
    const int64_t kblocks = (a.k + 127) / 128;
    const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
    const int r0 = min(row0 + 16 * w + g, m - 1), r1 = min(row0 + 16 * w + g + 8, m - 1);
    const int nb0 = min(n0 / 128, (n - 1) / 128), nb1 = min(n0 / 128 + 1, (n - 1) / 128);
    sa0 = a.scales.a + r0 * kblocks, sa1 = a.scales.a + r1 * kblocks;
    sb0 = a.scales.b + nb0 * kblocks, sb1 = a.scales.b + nb1 * kblocks;
    prefetch(kb);
  }
  // The scales of the k block loaded last (1 unless block128).
  __device__ __forceinline__ void product(float (&s)[2][2]) const {
    s[0][0] = s[0][1] = s[1][0] = s[1][1] = 1.0f;
    if (!on) return;
    s[0][0] = x0 * y0, s[0][1] = x1 * y0, s[1][0] = x0 * y1, s[1][1] = x1 * y1;
  }
  // Loads k block kt's, if it is the consumer's.
  __device__ __forceinline__ void prefetch(int kt) {
    if (on && kt < ke) x0 = __ldg(sa0 + kt), x1 = __ldg(sa1 + kt), y0 = __ldg(sb0 + kt), y1 = __ldg(sb1 + kt);
  }
};

// Accumulation: the tensor core's partial sums promoted into the frame's fp32 sums d every
// PROMOTE_EVERY k tiles, with the block128 scales (fp8 only), over the stages of a WholeTiles
// mainloop. Turns orders the two consumers' issue (NoTurns here: each issues as its stage lands;
// rung 30's turn-taking in 30_wgmma_fp8_overlap.cu): wait(cw, it, half) before a half-step's MMAs,
// pass(cw) after they are issued, and after_tiles(cw, it) once per consumer after its last tile.
struct NoTurns {
  static __device__ __forceinline__ void wait(int, int, int) {}
  static __device__ __forceinline__ void pass(int) {}
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

template <class Turns>
struct PromoteWith {
  // k tiles (of 128) per promotion: block128 scales change every 128 k, so 1 (see the top).
  static constexpr int PROMOTE_EVERY = 1;
  // The consumer's k loop over k tiles kb .. ke - 1 of the tile whose rows row0 .. row0 + 63 (this
  // consumer's) and columns n0 .. n0 + 255 it sums into d; `it`: the consumer's stage counter,
  // release(slot): both blocks' producers may refill the slot.
  template <typename T, class Args, class Release>
  static __device__ __forceinline__ void k_loop(float (&d)[128], const Args& a, const unsigned char* smem,
                                                uint64_t* full, int& it, int kb, int ke, int row0, int n0, int cw,
                                                Release&& release) {
    static_assert(PROMOTE_EVERY == 1, "one k tile per promotion (block128)");
    using TA8 = typename Problem<T>::A;
    using TB8 = typename Problem<T>::B;
    float part[64];  // one half's partial sum (the MMAs start it from zero)
#pragma unroll
    for (int i = 0; i < 64; ++i) part[i] = 0.0f;
    Block128Scales scales(a, row0, n0, kb, ke);  // block128: k tile kt + 1's loaded during kt
    // Shared-space addresses converted once, not per k tile (ncu: the conversions of generic
    // pointers and the scales' address arithmetic ran between two k tiles' MMAs, where both
    // consumers are at once and the tensor core idles): slot 0's descriptors of this consumer's A
    // rows and of B, and its full barrier. A slot, a k step (32 bytes) or a half of B moves the
    // descriptors' start address (16-byte units).
    const uint64_t da0 = detail::smem_desc(smem + cw * 64 * ROW, 16, 1024);
    const uint64_t db0 = detail::smem_desc(smem + A_BYTES, 16, 1024);
    const uint32_t full0 = detail::smem_u32(full);
    for (int kt = kb; kt < ke; ++kt, ++it) {
      float s[2][2];  // s[half][h]: row h's scale in column block `half` for k block kt
      scales.product(s);
      const int slot = it % STAGES;
      detail::mbar_wait(full0 + 8u * slot, (it / STAGES) & 1);
      const uint64_t at = uint64_t(slot) * (STAGE_BYTES / 16);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        Turns::wait(cw, it, half);
        detail::wgmma_fence();
        detail::wgmma_stage_64x128_fp8<TA8, TB8>(part, da0 + at, db0 + at + half * (128 * ROW / 16), false);
        detail::wgmma_commit();
        Turns::pass(cw);
        if (half == 0) scales.prefetch(kt + 1);  // under this half's MMAs
        detail::wgmma_wait<0>();
        if (half == 1) release(slot);  // both halves have read the stage
        // part[4j + e]: row 16w + g + 8 (e / 2), column 128 half + 8j + 2q + e % 2, which is
        // d[64 half + 4j + e] of the 64 x 256 sums.
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float& x = d[64 * half + 4 * j + e];
            x = fmaf(s[half][e / 2], part[4 * j + e], x);
          }
      }
    }
  }
  // The frame's call for piece p: the k loop over this consumer's rows of the tile.
  template <class M, class S, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[128], const Walk& walk, int p, int t, int kb, int ke,
                                                  const typename Problem<T>::Args& a, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi&, const Ctx&,
                                                  Release&& release) {
    static_assert(std::is_same_v<M, WholeTiles>, "whole tiles");
    int m0, n0;
    bool solo;
    walk.tile(p, t, m0, n0, solo);
    k_loop<T>(d, a, smem, full, it, kb, ke, m0 + 64 * cw, n0, cw, release);
  }
  template <typename T>
  static __device__ __forceinline__ void scale(float (&d)[128], const typename Problem<T>::Args& a, int row0,
                                               int col0) {
    ScaledInTensorCore::scale<T>(d, a, row0, col0);  // tensor and outer (block128's are applied above)
  }
  static __device__ __forceinline__ void after_tiles(int cw, int it) { Turns::after_tiles(cw, it); }
};
using Promote = PromoteWith<NoTurns>;

}  // namespace rungs::sgemm::ws
