// The cooperative consumers, the Schedule base of every rung on the frame but rung 18's PingPong:
// both consumer warpgroups work on every tile, consumer cw on its rows 64 cw .. 64 cw + 63, and
// each stage is read by both (a slot is free after CONSUMERS arrivals from each block).
#pragma once

#include "gemm/ws/k_loop.cuh"
#include "gemm/ws/parts.cuh"

namespace rungs::sgemm::ws {

struct Cooperative {
  static constexpr int SLOT_READERS = CONSUMERS;  // a block's consumers that read and release each stage
  static constexpr int BARRIERS = 0;              // mbarriers of the schedule's own (none)
  static __device__ __forceinline__ void init_barriers(uint64_t*, int) {}
  // One stage's MMAs of consumer cw: its 64 rows of A against the first N columns of B.
  template <typename T, bool A_MN, bool B_MN, int N>
  static __device__ __forceinline__ void stage(float (&d)[128], const unsigned char* As, const unsigned char* Bs,
                                               int cw) {
    mma_stage<T, A_MN, B_MN, N>(d, As, Bs, cw);
  }
  // Consumer cw's part of every piece of the walk: the accumulation's k loop into d, then the
  // walk's finish, which stores the tile through the epilogue (or hands on a split tile's partial
  // sums). S: the schedule itself.
  template <class S, class M, class Ac, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx,
            class Release>
  static __device__ __forceinline__ void consume(const Walk& walk, const typename Problem<T>::Args& a,
                                                 const unsigned char* smem, uint64_t* full, uint64_t*, int cw,
                                                 Epi& epi, const Ctx& ctx, Release&& release) {
    int it = 0;
    float d[M::ACC];
    for (int p = 0; p < walk.count; ++p) {
      int t = 0, kb = 0, ke = 0;
      walk.piece(p, t, kb, ke);
#pragma unroll
      for (int i = 0; i < M::ACC; ++i) d[i] = 0.0f;
      Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, a, smem, full, cw, it, epi, ctx, release);
      epi.after_mainloop(ctx, ke - kb);
      auto store_tile = [&] {
        int m0, n0;  // (found only now: fewer registers held beside the accumulators)
        bool solo;
        walk.tile(p, t, m0, n0, solo);
        Ac::template scale<T>(d, a, m0 + 64 * cw, n0);
        epi.store(ctx, d, m0, n0);
      };
      walk.finish(d, kb, ke, cw, store_tile);
    }
    Ac::after_tiles(cw, it);
  }
};

}  // namespace rungs::sgemm::ws
