// The consumers' k loop of the TMA stage mainloops (ws/tma_stages.cuh): per stage, wait for its
// bytes, issue its wgmmas (from shared memory, or with A through registers for tf32 m-contiguous A),
// commit, and release the stage before once its MMAs have retired. The mainloop picks the width the
// tile is multiplied at and whether a narrow tile's stages hold two k tiles.
#pragma once

#include "detail/sm90/mma_stage.cuh"
#include "gemm/ws/parts.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// One stage's MMAs for warpgroup `half`: fp8 (both operands K-major) or T's; d: the accumulator of
// 64 x 2R (R >= N / 2). accumulate = false (fp8): the stage's first MMA starts a fresh sum.
template <typename T, bool A_MN, bool B_MN, int N, int R>
__device__ __forceinline__ void mma_stage(float (&d)[R], const unsigned char* As, const unsigned char* Bs, int half,
                                          bool accumulate = true) {
  using Pr = Problem<T>;
  if constexpr (Pr::fp8) {
    static_assert(!A_MN && !B_MN, "fp8: K-major operands");
    detail::wgmma_stage_64xn_fp8<typename Pr::A, typename Pr::B, N>(d, As, Bs, half, accumulate);
  } else {
    detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As, Bs, half);
  }
}

// The accumulator zeroed where this is called: the empty asm keeps the compiler from moving the
// zeros among the wgmmas (ptxas serializes them then: C7515).
template <int R>
__device__ __forceinline__ void clear_acc(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    d[i] = 0.0f;
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

// A consumer's k loop over k tiles kb .. ke - 1 of piece p, its sums in the tensor core's
// accumulator d, multiplying the first N columns of B a stage (the width M picks for the tile;
// two: stages of two k tiles) against the rows of A the schedule gives the consumer (S::stage). `it` counts the consumer's stages over all its pieces; release(slot):
// both blocks' producers may refill the slot. The epilogue's in_mainloop hook runs after each k
// tile's MMAs are issued.
template <class M, class S, typename T, bool A_MN, bool B_MN, int R, class Walk, class Epi, class Ctx, class Release>
__device__ __forceinline__ void multiply_piece(float (&d)[R], const Walk& walk, int p, int t, int kb, int ke,
                                               const unsigned char* smem, uint64_t* full, int cw, int& it, Epi& epi,
                                               const Ctx& ctx, Release&& release, int64_t m, int64_t n) {
  constexpr bool RS = std::is_same_v<T, float> && A_MN;
  constexpr int RING = M::RING, STAGE = M::RING_STAGE_BYTES;  // the mainloop's ring
  auto mainloop = [&](auto width, bool two) {
    constexpr int N = decltype(width)::value;
    if constexpr (RS) {
      // A's fragments through registers, double-buffered: while stage it's MMAs run (reading
      // one fragment set), the fragments of stage it + 1 are loaded into the other, after
      // wait<1> has retired the group that read it (stage it - 1). Two sets by name (fa, fb),
      // the loop unrolled by two, so no register array is indexed at run time.
      // M::pairs, a narrow tile: stages of two k tiles (A, A', B, B') here too, each k tile
      // still a step of its own: k tile kt is half h = (kt - kb) % 2 of stage it (A at
      // h A_BYTES, B at 2 A_BYTES + h B_PAIR); a stage's first half releases the stage before
      // (wait<1> has retired its last half). The same loop (a second loop for the pairs made
      // ptxas serialize the kernel's wgmmas, C7512: register resources).
      uint32_t fa[16], fb[16];
      const bool pair = M::pairs && N == 64 && two;
      auto load = [&](uint32_t (&f)[16], int u, int h) {
        const int s = u % RING;
        if (h == 0) detail::mbar_wait(&full[s], (u / RING) & 1);
        detail::load_a_frags_mn_tf32(f, smem + s * STAGE + h * A_BYTES, cw);
      };
      auto step = [&](const uint32_t (&cur)[16], uint32_t (&nxt)[16], int kt) {
        const int h = pair ? (kt - kb) & 1 : 0;
        detail::wgmma_fence();
        detail::wgmma_stage_64xn_rs<N>(d, cur,
                                       smem + (it % RING) * STAGE + (pair ? 2 * A_BYTES + h * B_PAIR : M::A_TILE_BYTES));
        detail::wgmma_commit();
        // Stage it - 1's MMAs have retired: its slot and nxt are free (a schedule whose
        // finishing code spills with a group in flight across stages waits for stage it's too).
        detail::wgmma_wait<S::rs_in_flight>();
        if (kt > kb && h == 0) release((it - 1) % RING);
        const bool done = h == 1 || !pair || kt + 1 == ke;  // the stage's last k tile
        if (kt + 1 < ke) load(nxt, done ? it + 1 : it, done ? 0 : 1);
        if (done) ++it;
      };
      if (kb < ke) load(fa, it, 0);
      int kt = kb;
      for (; kt + 1 < ke; kt += 2) step(fa, fb, kt), step(fb, fa, kt + 1);
      if (kt < ke) step(fa, fb, kt);
      detail::wgmma_wait<0>();
      if (ke > kb) release((it - 1) % RING);
    } else {
      // M::pairs: a stage of two k tiles is a loop step of its own (a branch between the two
      // stages' wgmmas made ptxas serialize every wgmma of the kernel: C7520).
      if constexpr (M::pairs && N == 64) {
        int kt = kb;
        for (; two && kt + 1 < ke; kt += 2, ++it) {
          const int s = it % RING;
          detail::mbar_wait(&full[s], (it / RING) & 1);
          const unsigned char* As = smem + s * STAGE;
          const unsigned char* Bs = As + 2 * A_BYTES;  // B, then B' 8 KB on
          detail::wgmma_fence();
          S::template stage<T, A_MN, B_MN, N>(d, As, Bs, cw);
          S::template stage<T, A_MN, B_MN, N>(d, As + A_BYTES, Bs + B_PAIR, cw);
          detail::wgmma_commit();
          detail::wgmma_wait<1>();
          if (kt > kb) release((it - 1) % RING);
        }
        if (two && kt < ke) {  // an odd last k tile, alone in its stage (B after both A's)
          const int s = it % RING;
          detail::mbar_wait(&full[s], (it / RING) & 1);
          const unsigned char* As = smem + s * STAGE;
          detail::wgmma_fence();
          S::template stage<T, A_MN, B_MN, N>(d, As, As + 2 * A_BYTES, cw);
          detail::wgmma_commit();
          detail::wgmma_wait<1>();
          if (kt > kb) release((it - 1) % RING);
          ++it;
        }
        if (two) {
          detail::wgmma_wait<0>();
          if (ke > kb) release((it - 1) % RING);
          return;
        }
      }
      for (int kt = kb; kt < ke; ++kt, ++it) {
        const int s = it % RING;
        detail::mbar_wait(&full[s], (it / RING) & 1);
        const unsigned char* As = smem + s * STAGE;
        const unsigned char* Bs = As + M::A_TILE_BYTES;
        detail::wgmma_fence();
        S::template stage<T, A_MN, B_MN, N>(d, As, Bs, cw);
        detail::wgmma_commit();
        epi.in_mainloop(ctx, kt - kb);
        detail::wgmma_wait<1>();  // the MMAs of k tile it - 1 have retired: release its slot
        if (kt > kb) release((it - 1) % RING);
      }
      detail::wgmma_wait<0>();
      if (ke > kb) release((it - 1) % RING);
    }
  };
  M::multiply(walk, p, t, m, n, cw, [](int nb, bool solo) { return M::two(nb, solo); }, mainloop);
}

}  // namespace rungs::sgemm::ws
